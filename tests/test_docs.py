"""The README and docs/: short enough, every relative link resolves, every Python block runs.

Links: each ``[text](target)`` and ``![alt](target)`` outside code must name a file or folder
of the project, and a ``#anchor`` must be a heading of the markdown file it points into, by
GitHub's slug rules. Python blocks run in-process, every model id played by the ``fake/rules``
agent (no weights, no network), and print what their ``print(...)  # output`` comments promise.
A block that cannot run offline is marked on the line before it with
``<!-- not-tested: why -->``.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import PROJECT_DIR

README = PROJECT_DIR / "README.md"
DOCS = PROJECT_DIR / "docs"
README_MAX_LINES = 300

FENCE = re.compile(r"^(\s*)(```|~~~)\s*([\w+-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
NOT_TESTED = re.compile(r"^\s*<!--\s*not-tested:\s*(.+?)\s*-->\s*$")


#: The READMEs of the data folders a user opens too.
FOLDER_READMES = ("compiled/README.md", "trainsets/calls/README.md")


def doc_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md")), *(PROJECT_DIR / p for p in FOLDER_READMES)]


def relative(path: Path) -> str:
    return path.relative_to(PROJECT_DIR).as_posix()


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, its code, and the comment line before it."""

    path: Path
    line: int
    language: str
    code: str
    marker: str | None


def parse(path: Path) -> tuple[list[str], list[Block]]:
    """Split a markdown file into its prose lines (code blocks blanked) and its code blocks."""
    prose: list[str] = []
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    fence: tuple[str, str, str, int] | None = None  # indent, fence, language, first line
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = (opened.group(1), opened.group(2), opened.group(3), number)
            body = []
            prose.append("")
            continue
        if fence is not None:
            if line.strip().startswith(fence[1]) and not line.strip().strip(fence[1][0]):
                before = next((p for p in reversed(lines[: fence[3] - 1]) if p.strip()), "")
                marker = NOT_TESTED.match(before)
                code = textwrap.dedent("\n".join(body)) + "\n"
                blocks.append(
                    Block(path, fence[3], fence[2], code, marker.group(1) if marker else None)
                )
                fence = None
            else:
                body.append(line)
            prose.append("")
            continue
        prose.append(line)
    assert fence is None, f"{relative(path)}:{fence[3]}: code block never closed"
    return prose, blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text, lower case, punctuation dropped, '-' for ' '."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w: letters, digits and '_', as GitHub keeps them
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for line in parse(path)[0]:
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> Iterator[tuple[int, str]]:
    """The targets of the links in a file's prose, with their line numbers."""
    for number, line in enumerate(parse(path)[0], 1):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            yield number, match.group(1)


def broken(path: Path, target: str) -> str | None:
    """Why a link from ``path`` does not resolve, or None when it does."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
        return None
    where, _, anchor = target.partition("#")
    file = (path.parent / where).resolve() if where else path
    if PROJECT_DIR not in (file, *file.parents):
        return "points outside the project"
    if not file.exists():
        return "no such file"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"no heading #{anchor} in {relative(file)}"
    return None


def test_slugs_follow_github() -> None:
    assert slug("Evaluate strategies: `freyr eval`") == "evaluate-strategies-freyr-eval"
    assert slug("LLMaker: FREYR's own benchmark") == "llmaker-freyrs-own-benchmark"
    assert slug("Qwen2.5-Coder-0.5B, 3 runs") == "qwen25-coder-05b-3-runs"
    assert slug("Retries (`exclude_blamed`)") == "retries-exclude_blamed"
    assert slug("Re-planning and a calibrate+replan program") == (
        "re-planning-and-a-calibratereplan-program"
    )


def test_blocks_and_their_markers_are_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n<!-- not-tested: needs a real model -->\n\n```python\nprint(1)\n```\n\n"
        "- item\n\n  ```python\n  print(2)  # 2\n  ```\n\n```bash\n# not a heading\n```\n",
        encoding="utf-8",
    )
    blocks = parse(page)[1]
    assert [(b.language, b.code, b.marker) for b in blocks] == [
        ("python", "print(1)\n", "needs a real model"),
        ("python", "print(2)  # 2\n", None),
        ("bash", "# not a heading\n", None),
    ]
    assert anchors(page) == {"title"}
    assert promised(blocks[1].code) == ["2"]


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


def test_there_is_a_docs_index() -> None:
    assert (DOCS / "README.md").is_file()
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"


@pytest.mark.parametrize("path", doc_files(), ids=relative)
def test_every_relative_link_resolves(path: Path) -> None:
    problems = [
        f"{relative(path)}:{number}: ({target}) {why}"
        for number, target in links(path)
        if (why := broken(path, target))
    ]
    assert not problems, "\n".join(problems)


def python_blocks() -> list[Block]:
    return [b for path in doc_files() for b in parse(path)[1] if b.language == "python"]


def promised(code: str) -> list[str]:
    """The outputs a block's ``print(...)  # output`` comments promise."""
    found = re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", code, re.M)
    return [text.removeprefix("...").strip() for text in found]


def block_case(block: Block) -> Any:
    marks: list[pytest.MarkDecorator] = []
    if block.marker:
        marks.append(pytest.mark.skip(reason=f"not-tested: {block.marker}"))
    if "from_mcp" in block.code:
        marks.append(pytest.mark.server)
    return pytest.param(block, marks=marks, id=f"{relative(block.path)}:{block.line}")


@pytest.fixture
def offline_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model a block names is played by ``fake/rules``: the block's code runs, no model.

    A model a block registers is forgotten afterwards.
    """
    import freyr_dspy.backends as backends
    from freyr_dspy.backends import _embedded as embedded

    real = backends.make_lm

    def fake(model_id: str, *args: Any, **kwargs: Any) -> Any:
        return real("fake/rules", *args, **kwargs)

    monkeypatch.setattr(backends, "make_lm", fake)
    monkeypatch.setattr(embedded, "EMBEDDED_MODELS", dict(embedded.EMBEDDED_MODELS))


@pytest.mark.usefixtures("offline_models")
@pytest.mark.parametrize("block", [block_case(b) for b in python_blocks()])
def test_python_block_runs(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT_DIR)  # blocks name project files (compiled/, tests/mcp_server.py)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(block.code, f"{relative(block.path)}:{block.line}", "exec"), {})
    for text in promised(block.code):
        assert text in output.getvalue()


def test_the_readme_has_a_quick_start_in_python() -> None:
    readme = [b for b in python_blocks() if b.path == README]
    assert readme and not any(b.marker for b in readme)


def test_the_tools_page_shows_every_source() -> None:
    section = (DOCS / "tools.md").read_text(encoding="utf-8").split("## Bring your tools", 1)[1]
    joined = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    for call in ("from_openai", "from_mcp", "from_dspy", "from_function"):
        assert f".{call}(" in joined
    assert promised(joined)

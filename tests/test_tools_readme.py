"""The README's "Bring your tools" snippets run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parent.parent


def snippets() -> list[str]:
    readme = PROJECT_DIR.joinpath("README.md").read_text(encoding="utf-8")
    section = readme.split("## Bring your tools", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def promised(code: str) -> list[str]:
    """The outputs a snippet's ``print(...)  # output`` comments promise."""
    found = re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", code, re.M)
    return [text.removeprefix("...").strip() for text in found]


CASES = [
    pytest.param(code, marks=[pytest.mark.server] if "from_mcp" in code else [], id=f"snippet{i}")
    for i, code in enumerate(snippets())
]


def test_the_section_shows_every_source() -> None:
    joined = "\n".join(snippets())
    for call in ("from_openai", "from_mcp", "from_dspy", "from_function"):
        assert f".{call}(" in joined


@pytest.mark.parametrize("code", CASES)
def test_snippet_prints_what_it_promises(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT_DIR)  # the MCP snippet starts tests/mcp_server.py
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert promised(code)
    for text in promised(code):
        assert text in output.getvalue()

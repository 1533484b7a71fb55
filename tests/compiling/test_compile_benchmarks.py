"""``freyr compile`` on every real benchmark: our trainset in, a loadable artifact out.

A well-formed fake plays every role (right format, no skill), so these tests check the
plumbing of each benchmark (trainset rows -> examples -> gold demos -> metric -> artifact),
not the scores. They need the data directory: NLT and CallNavi read their tool catalogs there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from freyr_dspy.artifacts import load
from freyr_dspy.cli import main
from freyr_dspy.settings import Settings
from freyr_dspy.testing import register_fake, unregister_fake
from tests.support.paths import PROJECT_DIR
from tests.support.role_samples import well_formed_lm


@pytest.fixture(autouse=True)
def well_formed() -> Iterator[None]:
    register_fake("well_formed", well_formed_lm())
    yield
    unregister_fake("well_formed")


@pytest.mark.parametrize(
    ("benchmark", "strategy", "options"),
    [
        ("llmaker", "freyr", ["--option", "max_retries=0"]),
        ("nlt-alex", "nlt", []),
        ("nlt-sage", "nlt", []),
        ("callnavi", "two_step", []),
    ],
)
def test_compile_each_benchmark_then_load_the_artifact(
    benchmark: str,
    strategy: str,
    options: list[str],
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(PROJECT_DIR))  # the shipped trainsets
    out = tmp_path / f"{benchmark}.json"
    code = main(
        [
            *("compile", "--no-search", "--benchmark", benchmark, "--strategy", strategy),
            *("--optimizer", "labeled", "--max-demos", "2", "--model", "fake/well_formed"),
            *("--data", str(data_dir), "--out", str(out), "--json", *options),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["strategy"] == strategy
    assert 0.0 <= summary["after"]["accuracy"] <= 1.0

    program = load(out, settings=Settings(project_dir=PROJECT_DIR), root=tmp_path)
    demos = {role: program.role(role).predictors()[0].demos for role in program.role_names}
    assert any(demos.values()), "the labeled optimizer put gold demos on at least one role"
    trainset = (PROJECT_DIR / "trainsets").glob("*.jsonl")
    train_text = "".join(p.read_text(encoding="utf-8") for p in trainset)
    for role_demos in demos.values():
        for demo in role_demos:  # every demo comes from our own trainset
            message = demo.get("message") or demo.get("question") or demo.get("query")
            if isinstance(message, str):
                assert json.dumps(message)[1:-1] in train_text

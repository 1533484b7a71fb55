"""``freyr eval/compile/search/label/run`` on a user's own tools and examples (fake/rules LM).

``fake/rules`` picks a tool when every word of its name is in the message and reads
``name=value`` arguments, so each row below is right or wrong for a reason the test knows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

# NOTE: freyr_dspy.tools._mcp is imported at collection, not first inside a test: the MCP SDK
# binds ``sys.stderr`` as its stdio client's default error log when imported, and a test's
# capture stream is closed after it, which broke every later MCP start (the docs' MCP example).
import freyr_dspy.tools._mcp  # noqa: F401
from freyr_dspy.cli import main
from tests.support.dataset_helpers import WEATHER_TOOLS, write_rows
from tests.support.paths import SUPPORT_DIR

ROWS = [
    {
        "id": "w1",
        "message": "get weather city=Oslo",
        "calls": [{"name": "get-weather", "arguments": {"city": "Oslo"}}],
    },
    {
        "id": "w2",
        "message": "get weather city=Paris days=2",
        "calls": [{"name": "get-weather", "arguments": {"city": "Paris", "days": 2}}],
    },
    {"id": "c1", "message": "hello, how are you", "calls": []},
    # the rules LM reads no city from this one: a known failure
    {
        "id": "w3",
        "message": "get weather in Rome please",
        "calls": [{"name": "get-weather", "arguments": {"city": "Rome"}}],
    },
]


@pytest.fixture
def freyr(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run ``freyr ARGS`` in a fresh project folder with tools.json and examples.jsonl."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    (tmp_path / "tools.json").write_text(json.dumps(WEATHER_TOOLS), encoding="utf-8")
    write_rows(
        tmp_path / "examples.jsonl",
        ROWS * 3 and [{**row, "id": f"{row['id']}-{n}"} for n in range(3) for row in ROWS],
    )

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


DATA = ("--tools", "tools.json", "--examples", "examples.jsonl", "--model", "fake/rules")


def test_eval_compares_strategies_per_category_and_resumes(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr("eval", *DATA, "--strategy", "freyr,prompted", "--out", "run.json")
    assert code == 0, err
    assert "one-call" in out and "no-tool" in out
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    records = {(r["strategy"], r["step"]): r for r in saved["records"]}
    assert records[("freyr", "w1-0")]["success"] == 1.0
    rome = records[("freyr", "w3-0")]
    assert rome["success"] == 0.0 and rome["failure_kind"] in {"arguments", "missed-call"}
    assert rome["diagnostics"]["expected"] == ["get-weather(city='Rome')"]
    assert "Rome" in rome["diagnostics"]["feedback"] or "city" in rome["diagnostics"]["feedback"]
    code, _, err = freyr("eval", *DATA, "--strategy", "freyr,prompted", "--out", "run.json")
    assert code == 0, err
    again = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert again["config"]["resumed_units"] == 24 and again["records"] == saved["records"]


def test_a_changed_examples_file_does_not_resume_old_units(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert freyr("eval", *DATA, "--strategy", "freyr", "--out", "run.json")[0] == 0
    write_rows(tmp_path / "examples.jsonl", ROWS[:2])
    code, _, err = freyr("eval", *DATA, "--strategy", "freyr", "--out", "run.json")
    assert code == 2 and "--restart" in err, err


def test_compile_then_run_the_artifact_with_the_same_tools(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr("compile", "--no-search", *DATA, "--dev-fraction", "0.25")
    assert code == 0, err
    assert "dev score before:" in out and "compiled/examples.json" in out
    text = (tmp_path / "compiled" / "examples.json").read_text(encoding="utf-8")
    meta = json.loads(text)["meta"]
    assert meta["benchmark"] == "calls" and meta["program"]["domain"] == "tools"
    assert set(meta["toolbox"]) == {"get-weather", "tag_photos"}
    assert "Weather for a city." not in text  # the tools' own text stays out of the artifact
    assert meta["optimizer"]["demo_roles"] == ["intent", "confirm", "parameters"]
    code, out, err = freyr(
        "run",
        "--program",
        "compiled/examples.json",
        "--tools",
        "tools.json",
        "--json",
        "-m",
        "get weather city=Lima",
    )
    assert code == 0, err
    [call] = json.loads(out)["calls"]
    assert (call["tool"], call["arguments"]) == ("get-weather", {"city": "Lima"})


def test_a_changed_toolbox_is_refused_in_one_line_unless_allowed(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", *DATA)[0] == 0
    changed = json.loads(json.dumps(WEATHER_TOOLS))
    changed[0]["function"]["description"] = "Weather, now with pollen."
    del changed[1]
    (tmp_path / "other.json").write_text(json.dumps(changed), encoding="utf-8")
    run = ("run", "--program", "compiled/examples.json", "--tools", "other.json", "-m", "hi")
    code, _, err = freyr(*run)
    assert code == 2
    assert err.strip().splitlines() == [
        "error: artifact compiled/examples.json was compiled for other tools (missing: "
        "tag_photos; changed: get-weather); recompile it, or accept them with "
        "--allow-changed-tools"
    ]
    code, _, err = freyr(*run, "--allow-changed-tools", "--model", "fake/rules")
    assert code == 0, err
    code, _, err = freyr("run", "--program", "compiled/examples.json", "-m", "hi")
    assert code == 2 and "needs them: pass toolbox=" in err


def test_search_picks_models_on_the_examples(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "search",
        "--tools",
        "tools.json",
        "--examples",
        "examples.jsonl",
        "--candidates-all",
        "fake/rules",
        "--trials",
        "2",
        "--out",
        "search",
        "--temperature",
        "off",
        "--top-p",
        "off",
        "--top-k",
        "off",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["study"].startswith("calls-") and len(data["trials"]) == 2
    assert 0 < data["trials"][0]["values"]["accuracy"] < 1  # Rome is missed, the others are right


def test_label_keeps_accepted_teacher_calls_and_drops_refused_ones(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_rows(
        tmp_path / "raw.jsonl",
        [
            {"id": "a", "message": "get weather city=Oslo days=3"},
            {"id": "b", "message": "get weather city=Oslo days=12"},  # days has a maximum of 7
            {"id": "c", "message": "thanks a lot"},
            {"id": "d", "message": "given", "calls": []},
        ],
    )
    code, _, err = freyr(
        "label",
        "--tools",
        "tools.json",
        "--examples",
        "raw.jsonl",
        "--teacher",
        "fake/rules",
        "--out",
        "labelled.jsonl",
    )
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "labelled.jsonl").read_text().splitlines()]
    assert rows == [
        {
            "id": "a",
            "message": "get weather city=Oslo days=3",
            "calls": [{"name": "get-weather", "arguments": {"city": "Oslo", "days": 3}}],
        },
        {"id": "c", "message": "thanks a lot", "calls": []},
        {"id": "d", "message": "given", "calls": []},
    ]
    assert "dropped b:" in err and "labelled 2 row(s), dropped 1" in err


def test_compile_labels_unlabelled_rows_with_its_teacher(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_rows(
        tmp_path / "raw.jsonl",
        [{"message": row["message"]} for row in ROWS] * 1
        + [{**row, "id": f"x{i}"} for i, row in enumerate(ROWS)],
    )
    raw = ("compile", "--tools", "tools.json", "--examples", "raw.jsonl", "--model", "fake/rules")
    code, _, err = freyr(*raw)
    assert code == 2 and "4 example row(s) have no calls (e.g. raw.jsonl:1)" in err
    code, _, err = freyr(*raw, "--teacher", "fake/rules")
    assert code == 0, err
    # the rules LM names no city for Rome: the tools refuse that call, and the row goes
    assert "labelled 3 row(s) with fake/rules; dropped 1" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("eval", "--benchmark", "todo", *DATA), "give --benchmark NAME or --examples FILE"),
        (("eval", "--tools", "tools.json", "--strategy", "freyr"), "go with --examples FILE"),
        (("eval", "--strategy", "freyr"), "say what to run on"),
        (
            ("compile", "--tools", "tools.json", "--mcp", "x", "--examples", "examples.jsonl"),
            "give the tools one way",
        ),
    ],
)
def test_wrong_combinations_are_one_line_errors(freyr, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    code, _, err = freyr(*args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_bad_row_stops_before_any_model_call(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_rows(tmp_path / "bad.jsonl", [ROWS[0], {"message": "x", "calls": [{"name": "nope"}]}])
    code, _, err = freyr("eval", "--tools", "tools.json", "--examples", "bad.jsonl")
    assert code == 2
    assert err.startswith("error: bad.jsonl:2: calls.0: unknown tool 'nope'")


def test_tools_from_an_mcp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # NOTE: capfd, not capsys: the server subprocess needs a real stderr file descriptor
    monkeypatch.chdir(tmp_path)
    server = f"{sys.executable} {SUPPORT_DIR / 'mcp_server.py'}"
    write_rows(
        tmp_path / "mcp.jsonl",
        [
            {
                "message": "math hypot a=3 b=4",
                "calls": [{"name": "math.hypot", "arguments": {"a": 3, "b": 4}}],
            },
        ],
    )
    args = ["eval", "--mcp", server, "--examples", "mcp.jsonl", "--strategy", "freyr"]
    code = main([*args, "--model", "fake/rules", "--json"])
    out, err = capfd.readouterr()
    assert code == 0, err
    [record] = json.loads(out)["records"]
    assert record["success"] == 1.0
    assert "not executed" in record["calls"][0]["outcome"]["message"]  # recorded, not run


def test_a_program_compiled_on_several_toolboxes_takes_any(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    office = [
        {
            "name": "send-mail",
            "description": "Send an e-mail.",
            "parameters": {
                "type": "object",
                "properties": {"to": {"type": "string"}},
                "required": ["to"],
            },
        }
    ]
    (tmp_path / "suite.json").write_text(
        json.dumps({"weather": WEATHER_TOOLS, "office": office}), encoding="utf-8"
    )
    mail = {
        "toolbox": "office",
        "message": "send mail to=ana",
        "calls": [{"name": "send-mail", "arguments": {"to": "ana"}}],
    }
    rows = [{**row, "toolbox": "weather"} for row in ROWS] + [mail]
    write_rows(tmp_path / "train.jsonl", [{**r, "id": f"t{i}"} for i, r in enumerate(rows * 2)])
    write_rows(
        tmp_path / "test.jsonl",
        [
            {
                **mail,
                "id": "m",
                "message": "send mail to=bo",
                "calls": [{"name": "send-mail", "arguments": {"to": "bo"}}],
            }
        ],
    )
    suite = ("--tools", "suite.json", "--model", "fake/rules")
    code, _, err = freyr("compile", *suite, "--examples", "train.jsonl", "--out", "compiled/s.json")
    assert code == 0, err
    meta = json.loads((tmp_path / "compiled" / "s.json").read_text(encoding="utf-8"))["meta"]
    assert meta["toolbox"] is None  # compiled on rows of two toolboxes: tool-agnostic
    code, out, err = freyr(
        "eval",
        *suite,
        "--examples",
        "test.jsonl",
        "--strategy",
        "freyr",
        "--program",
        "compiled/s.json",
        "--json",
    )
    assert code == 0, err
    assert [r["success"] for r in json.loads(out)["records"]] == [1.0, 1.0]


def test_compile_on_top_of_an_artifact_for_your_tools(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", "--no-search", *DATA, "--out", "compiled/first.json")[0] == 0
    code, _, err = freyr(
        "compile",
        "--no-search",
        *DATA,
        "--start",
        "compiled/first.json",
        "--optimizer",
        "bootstrap",
        "--out",
        "compiled/second.json",
    )
    assert code == 0, err
    meta = json.loads((tmp_path / "compiled" / "second.json").read_text(encoding="utf-8"))["meta"]
    assert meta["started_from"] == "first.json (labeled)"
    assert set(meta["toolbox"]) == {"get-weather", "tag_photos"}


WEATHER_MODULE = '''
def get_weather(city: str, days: int = 1) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


TOOLS = [get_weather]
'''


def twice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` two times over, each copy with its own id."""
    return [
        {**row, "id": f"{row.get('id', 'r')}-{n}-{i}"}
        for n in range(2)
        for i, row in enumerate(rows)
    ]


def source_rows(tmp_path: Path, source: str) -> tuple[str, ...]:
    """Write the rows of one example source; return the compile arguments that name it."""
    if source == "tools-module":
        (tmp_path / "weather_tools.py").write_text(WEATHER_MODULE, encoding="utf-8")
        rows = [
            {**row, "calls": [{**c, "name": "get_weather"} for c in row["calls"]],
             "message": row["message"].replace("get weather", "get_weather")}
            for row in ROWS
        ]  # fmt: skip
        write_rows(tmp_path / "module.jsonl", twice(rows))
        return ("--tools-module", "weather_tools:TOOLS", "--examples", "module.jsonl")
    if source == "mcp":
        hypot = {
            "message": "math hypot a=3 b=4",
            "calls": [{"name": "math.hypot", "arguments": {"a": 3, "b": 4}}],
        }
        write_rows(tmp_path / "mcp.jsonl", twice([hypot, ROWS[2]] * 2))
        server = f"{sys.executable} {SUPPORT_DIR / 'mcp_server.py'}"
        return ("--mcp", server, "--examples", "mcp.jsonl")
    if source == "row-tools":  # each row offers its own tools, no file-level toolbox
        write_rows(tmp_path / "own.jsonl", twice([{**row, "tools": WEATHER_TOOLS} for row in ROWS]))
        return ("--examples", "own.jsonl")
    return ("--tools", "tools.json", "--examples", "examples.jsonl")


@pytest.mark.parametrize("source", ["tools", "tools-module", "mcp", "row-tools"])
def test_the_compile_study_runs_on_every_example_source(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # NOTE: capfd, as for MCP above: the server subprocess needs a real stderr descriptor
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))  # where --tools-module finds weather_tools
    (tmp_path / "tools.json").write_text(json.dumps(WEATHER_TOOLS), encoding="utf-8")
    write_rows(tmp_path / "examples.jsonl", twice(ROWS))
    study = ("--folds", "2", "--model", "fake/rules", "--out", "out.json")
    code = main(["compile", *source_rows(tmp_path, source), *study])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "candidates on 8 rows" in out
    assert "kept the baseline" in out or "chose trial" in out
    meta = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["meta"]
    search = meta["search"]
    assert (search["rows"], search["folds"]) == (8, 2) and search["trials"]
    shipped = next(t for t in search["trials"] if t["number"] == search["shipped"])
    assert search["shipped_config"] == shipped["config"]

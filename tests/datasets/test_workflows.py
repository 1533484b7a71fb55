"""The Python API on a user's examples: ``evaluate``, ``compile``, ``save`` and ``load``."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest

import freyr_dspy
from freyr_dspy import FreyrProgram, RoleModel, Toolbox
from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.settings import Settings

EXAMPLES = [
    {
        "message": "get weather city=Oslo",
        "calls": [{"name": "get-weather", "arguments": {"city": "Oslo"}}],
    },
    {
        "message": "get weather city=Bergen days=3",
        "calls": [{"name": "get-weather", "arguments": {"city": "Bergen", "days": 3}}],
    },
    {"message": "good morning", "calls": []},
    {
        "message": "get weather in Rome",
        "calls": [{"name": "get-weather", "arguments": {"city": "Rome"}}],
    },
]


def rules_program(box: Toolbox, strategy: str = "freyr") -> FreyrProgram:
    program = FreyrProgram(toolbox=box, strategy=strategy)
    return program.apply_assignment({r: RoleModel(model="fake/rules") for r in program.role_names})


def test_a_program_from_a_toolbox_alone_is_plain(box: Toolbox) -> None:
    program = FreyrProgram(toolbox=box)
    assert program.domain.name == "tools" and program.coerce_state(None) is None
    assert program.domain.renderer()(None) == "(no state)"  # no to-do list in the prompts
    with pytest.raises(ConfigError, match="FreyrProgram needs tools"):
        FreyrProgram()


def test_evaluate_scores_dicts_and_dspy_examples_alike(box: Toolbox) -> None:
    program = rules_program(box)
    summary = freyr_dspy.evaluate(program, EXAMPLES)
    assert summary.steps == 4 and summary.accuracy == 0.75  # Rome names no city=
    assert summary.failure_kinds in ({"arguments": 1}, {"missed-call": 1})
    as_dspy = [dspy.Example(**row) for row in EXAMPLES]
    assert freyr_dspy.evaluate(program, as_dspy).accuracy == summary.accuracy


def test_evaluate_records_calls_and_runs_tools_only_when_asked() -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Weather for a city."""
        ran.append(city)
        return f"sunny in {city}"

    program = rules_program(Toolbox([freyr_dspy.Tool.from_function(get_weather)]))
    rows = [
        {
            "message": "get weather city=Oslo",
            "calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
        }
    ]
    assert freyr_dspy.evaluate(program, rows).accuracy == 1.0 and ran == []
    assert freyr_dspy.evaluate(program, rows, execute=True).accuracy == 1.0 and ran == ["Oslo"]


def test_evaluate_refuses_a_bad_example_by_position(box: Toolbox) -> None:
    with pytest.raises(DataError, match=r"^examples:2: calls\.0: unknown tool 'weather'"):
        freyr_dspy.evaluate(
            rules_program(box), [EXAMPLES[0], {"message": "x", "calls": [{"name": "weather"}]}]
        )


def test_compile_save_and_load_with_the_toolbox(box: Toolbox, tmp_path: Path) -> None:
    program = rules_program(box)
    settings = Settings(project_dir=tmp_path)
    outcome = freyr_dspy.compile(
        program,
        EXAMPLES * 3,
        test=EXAMPLES,
        settings=freyr_dspy.CompileSettings(max_demos=2, folds=3),
        project=settings,
    )
    # keyword rules ignore demos: nothing beats the baseline, so the baseline is what ships
    assert outcome.choice.sentence().startswith("kept the baseline")
    assert outcome.held_out is not None
    assert outcome.held_out.before == outcome.held_out.after == 0.75
    path = freyr_dspy.save(outcome.program, settings.compiled_dir / "mine.json", outcome.meta)
    loaded = freyr_dspy.load(path, settings=settings, toolbox=box)
    assert freyr_dspy.evaluate(loaded, EXAMPLES).accuracy == 0.75
    with pytest.raises(ConfigError, match="needs them"):
        freyr_dspy.load(path, settings=settings)
    other = Toolbox.from_openai(
        [
            {
                "name": "ping",
                "description": "Ping.",
                "parameters": {"type": "object", "properties": {}},
            }
        ]
    )
    with pytest.raises(ConfigError, match="missing: get-weather, tag_photos; new: ping"):
        freyr_dspy.load(path, settings=settings, toolbox=other)
    assert freyr_dspy.load(path, settings=settings, toolbox=other, allow_changed_tools=True)

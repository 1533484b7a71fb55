"""``freyr strategies``: every strategy with its roles and settings, as text and JSON."""

from __future__ import annotations

import json

import pytest

from freyr_dspy.cli import main


def test_strategies_lists_roles_settings_defaults_and_what_each_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["strategies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "  roles: intent, confirm, parameters, summary, chat"
    abstain = next(line for line in lines if line.strip().startswith("abstain="))
    assert abstain.split()[0] == "abstain=False" and "no call" in abstain
    assert any(line.startswith("native: ") for line in lines)


def test_strategies_json_round_trips_every_settings_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from freyr_dspy.strategies import make_strategy

    assert main(["strategies", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    described = {s["name"]: s for s in listed["strategies"]}
    assert listed["presets"]["default"] == "freyr"
    assert all(p["model"] and p["strategy"] and p["evidence"] for p in listed["presets"]["models"])
    assert {"freyr", "native", "nlt", "gated", "prompted"} <= set(described)
    for name in ("freyr", "nlt", "gated"):
        defaults = {s["name"]: s["default"] for s in described[name]["settings"]}
        built = make_strategy(name, **defaults)
        assert list(built.role_names) == described[name]["roles"]
        assert all(setting["help"] for setting in described[name]["settings"])


def test_strategies_shows_what_runs_without_a_strategy_per_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from freyr_dspy.strategies import PRESETS, default_strategy

    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    assert "without --strategy (run, chat, serve, eval, compile): freyr, except" in out
    for model, preset in PRESETS.items():
        assert f"  {model}: {preset.strategy}  (" in out
        assert default_strategy(model) == preset.strategy
    assert default_strategy("fake/unknown") == default_strategy(None) == "freyr"

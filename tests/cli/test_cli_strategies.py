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
    described = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert {"freyr", "native", "nlt", "gated", "prompted"} <= set(described)
    for name in ("freyr", "nlt", "gated"):
        defaults = {s["name"]: s["default"] for s in described[name]["settings"]}
        built = make_strategy(name, **defaults)
        assert list(built.role_names) == described[name]["roles"]
        assert all(setting["help"] for setting in described[name]["settings"])

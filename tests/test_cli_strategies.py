"""``freyr strategies``: every strategy with its roles and settings, as text and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from freyr_dspy.cli import cli


def test_strategies_lists_roles_settings_defaults_and_what_each_does() -> None:
    result = CliRunner().invoke(cli, ["strategies"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "  roles: intent, confirm, parameters, summary, chat"
    abstain = next(line for line in lines if line.strip().startswith("abstain="))
    assert abstain.split()[0] == "abstain=False" and "no call" in abstain
    assert any(line.startswith("native: ") for line in lines)


def test_strategies_json_round_trips_every_settings_default() -> None:
    from freyr_dspy.strategies import make_strategy

    result = CliRunner().invoke(cli, ["strategies", "--json"])
    described = {s["name"]: s for s in json.loads(result.output)}
    assert {"freyr", "native", "nlt", "gated", "prompted"} <= set(described)
    for name in ("freyr", "nlt", "gated"):
        defaults = {s["name"]: s["default"] for s in described[name]["settings"]}
        built = make_strategy(name, **defaults)
        assert list(built.role_names) == described[name]["roles"]
        assert all(setting["help"] for setting in described[name]["settings"])

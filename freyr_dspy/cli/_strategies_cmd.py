"""``freyr strategies``: every strategy, the roles it calls and its settings with their defaults."""

from __future__ import annotations

import inspect
import re
from typing import Any

import click

from freyr_dspy.cli._common import echo_json, json_option
from freyr_dspy.strategies import (
    DEFAULT_STRATEGY,
    PRESETS,
    STRATEGIES,
    StrategyFactory,
    load_strategies,
    setting_defaults,
    setting_names,
)

__all__ = []

_ARG_LINE = re.compile(r"^\s{4,}(\w+):\s*(.*)$")


@click.command("strategies")
@json_option
def command(as_json: bool) -> None:
    """List the strategies, their roles and settings (switch one on with NAME+SETTING).

    Then the model presets: what run, chat and serve use when no --strategy is given.
    """
    load_strategies()
    described = [describe_strategy(factory) for factory in STRATEGIES.values()]
    presets = describe_presets()
    if as_json:
        echo_json({"strategies": described, "presets": presets})
        return
    for strategy in described:
        click.echo(f"{strategy['name']}: {strategy['description']}")
        click.echo(f"  roles: {', '.join(strategy['roles'])}")
        for setting in strategy["settings"]:
            shown = f"{setting['name']}={setting['default']}"
            click.echo(f"  {shown:<22} {setting['help']}".rstrip())
    click.echo(
        f"\nwithout --strategy (run, chat, serve, eval, compile): {presets['default']}, except"
    )
    for preset in presets["models"]:
        click.echo(f"  {preset['model']}: {preset['strategy']}  ({preset['evidence']})")


def describe_presets() -> dict[str, Any]:
    """The strategy run without ``--strategy``, and each model's own (``PRESETS``)."""
    return {
        "default": DEFAULT_STRATEGY,
        "models": [
            {"model": model, "strategy": preset.strategy, "evidence": preset.evidence}
            for model, preset in PRESETS.items()
        ],
    }


def describe_strategy(factory: StrategyFactory) -> dict[str, Any]:
    """Name, description, roles (with the default settings) and each setting's default and help."""
    helps = _argument_help(inspect.getdoc(factory) or "")
    defaults = setting_defaults(factory)
    return {
        "name": factory.name,
        "description": factory.description,
        "roles": list(factory().role_names),
        "settings": [
            {"name": name, "default": defaults.get(name), "help": helps.get(name, "")}
            for name in setting_names(factory)
        ],
    }


def _argument_help(doc: str) -> dict[str, str]:
    """The first sentence of each ``name: text`` entry of a docstring's ``Args:`` section."""
    helps: dict[str, str] = {}
    in_args, current = False, None
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Settings:") or line.startswith("Settings ("):
            in_args = True
            continue
        if not in_args:
            continue
        if line.strip() and not line.startswith(" "):
            break  # the next section
        entry = (
            _ARG_LINE.match(line)
            if line.startswith("    ") and not line.startswith(" " * 8)
            else None
        )
        if entry:
            current = entry.group(1)
            helps[current] = entry.group(2).strip()
        elif current and line.strip():
            helps[current] += " " + line.strip()
    return {name: _first_sentence(text) for name, text in helps.items()}


def _first_sentence(text: str) -> str:
    """Up to the first full stop, without its ``(``references``)`` to the code's modules.

    The user reads what a setting does; where it lives in the code is for the docs.
    """
    match = re.search(r"^(.+?\.)(\s|$)", text)
    sentence = (match.group(1) if match else text).rstrip(".")
    sentence = re.sub(r"\s*\(``freyr_dspy\.[^)]*``\)", "", sentence)
    return re.sub(r"\s*\(``[^)]*``\)$", "", sentence).replace("``", "")

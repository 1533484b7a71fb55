"""Model presets: the strategy a program runs when nobody names one, per model.

``freyr run``, ``freyr chat`` and ``freyr serve`` without ``--strategy`` run
``default_strategy(model)``: plain ``freyr``, or a variant with switches that were measured to
pay on that model. A switch joins a model's preset only by the rule of the default-program
measurements (docs/results/default-program.md, "Defaults"): it gains on at least two
benchmarks other than LLMaker and loses significantly on none, for that model. A strategy
named on the command line (``--strategy freyr``) is taken as written, without the preset.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_STRATEGY", "PRESETS", "Preset", "default_strategy"]

#: What runs when neither the user nor a preset names a strategy.
DEFAULT_STRATEGY = "freyr"


@dataclass(frozen=True)
class Preset:
    """The strategy label a model gets by default, and the measurement behind it."""

    strategy: str
    evidence: str


#: Model id -> its preset. Models not listed run ``DEFAULT_STRATEGY``.
PRESETS: dict[str, Preset] = {
    "embedded/qwen2.5-coder-0.5b": Preset(
        strategy="freyr+calibrate",
        evidence=(
            "our suite 35.2 vs 30.8 % exact (6 won, 2 lost), CallNavi 52.4 vs 47.6 % (1 won, "
            "0 lost), NLT alex and sage unchanged, LLMaker the best 0.5B contestant in 3 runs"
        ),
    ),
}


def default_strategy(model: str | None) -> str:
    """The strategy label a program on ``model`` runs when no strategy is named."""
    preset = PRESETS.get(model or "")
    return preset.strategy if preset is not None else DEFAULT_STRATEGY

"""Limits of the level-editing functions, and the validation error they raise.

The limits are those of dungeon-despair-domain 34f4ac5 except ``max_hp``: the public code
caps hp at 20, but the benchmark's own reference levels hold enemies with 50-1000 hp and six
steps ask for such values (T2.2, T2.9, T3.4, T3.8, T3.10, T5.12), so the benchmark default
is 1000. ``LevelConfig(max_hp=20)`` reproduces the public cap. The tool descriptions quote
these numbers, so they change with the configuration.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NoReturn

from freyr_dspy.errors import ToolError

__all__ = [
    "BENCHMARK_CONFIG",
    "PUBLIC_CONFIG",
    "LevelConfig",
    "fail",
    "require",
    "require_range",
    "require_text",
]

#: Prefix of every domain validation message (the original dispatcher's wording).
VALIDATION_PREFIX = "Domain validation error: "


@dataclass(frozen=True)
class LevelConfig:
    """Ranges and capacities enforced by the level-editing functions (bounds inclusive)."""

    min_hp: float = 1.0
    max_hp: float = 1000.0
    min_dodge: float = 0.1
    max_dodge: float = 1.0
    min_prot: float = 0.0
    max_prot: float = 1.0
    min_spd: float = 0.1
    max_spd: float = 1.0
    max_enemies: int = 4
    max_traps: int = 1
    max_treasures: int = 1
    max_attacks: int = 4
    max_base_dmg: float = 5.0
    min_corridor_length: int = 2
    max_corridor_length: int = 4

    def as_format_values(self) -> dict[str, str]:
        """The limits as text, for filling the ``{placeholders}`` of tool descriptions."""
        return {k: _number(v) for k, v in asdict(self).items()}

    def capacity(self, entity_type: str) -> int:
        """How many entities of a type one encounter may hold."""
        limits = {"enemy": self.max_enemies, "trap": self.max_traps, "treasure": self.max_treasures}
        return limits[entity_type]


#: The benchmark default: high enough for every hp the test requests ask for.
BENCHMARK_CONFIG = LevelConfig()
#: The cap of the public dungeon-despair-domain code (six test steps become impossible).
PUBLIC_CONFIG = LevelConfig(max_hp=20.0)


def fail(message: str) -> NoReturn:
    """Reject a call with a message the model can act on.

    Raises:
        ToolError: always; the toolbox turns it into an error outcome and keeps the old level.
    """
    raise ToolError(VALIDATION_PREFIX + message)


def require(condition: bool, message: str) -> None:
    """Reject the call with ``message`` unless ``condition`` holds.

    Raises:
        ToolError: when ``condition`` is false.
    """
    if not condition:
        fail(message)


def require_text(**values: str) -> None:
    """Reject the call when any of the named string arguments is empty or blank.

    Raises:
        ToolError: naming the first empty argument.
    """
    for name, value in values.items():
        require(bool(value and value.strip()), f"{name} should be provided (it is empty).")


def require_range(name: str, value: float, low: float, high: float) -> None:
    """Reject the call when ``value`` is outside ``[low, high]``.

    Raises:
        ToolError: quoting the allowed range.
    """
    require(
        low <= value <= high,
        f"{name} must be between {_number(low)} and {_number(high)}; got {_number(value)}.",
    )


def _number(value: float | int) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

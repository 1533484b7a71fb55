"""The 16 level-editing functions of Dungeon Despair as a freyr ``Toolbox``.

Each function is a method whose typed parameters and Google-style ``Args:`` become the tool
schema; the level arrives through the ``state`` parameter (the toolbox passes a copy and
keeps it only when the call succeeds, so a rejected call loses nothing). A rejected call
raises ``ToolError("Domain validation error: ...")`` whose message tells the model what to
fix. Descriptions quote the configured limits (``{max_hp}`` etc. are filled in here), so a
model always sees the ranges the validation enforces.

Libraries (for GeckOpt-style gating): ``rooms``, ``corridors``, ``entities``, ``attacks``.
"""

from __future__ import annotations

from dataclasses import replace

from freyr_dspy.benchmarks.llmaker._attacks import AttackFunctions
from freyr_dspy.benchmarks.llmaker._config import BENCHMARK_CONFIG, LevelConfig
from freyr_dspy.benchmarks.llmaker._corridors import CorridorFunctions
from freyr_dspy.benchmarks.llmaker._entities import EntityFunctions
from freyr_dspy.benchmarks.llmaker._rooms import RoomFunctions
from freyr_dspy.tools import Tool, Toolbox

__all__ = ["LIBRARIES", "TOOL_NAMES", "make_toolbox"]

#: Library -> tool names, in the order of the original ``get_tool_schema()``.
LIBRARIES: dict[str, tuple[str, ...]] = {
    "rooms": ("create_room", "remove_room", "update_room"),
    "corridors": ("add_corridor", "remove_corridor", "update_corridor"),
    "entities": (
        "add_enemy",
        "add_treasure",
        "add_trap",
        "update_enemy_properties",
        "update_treasure_properties",
        "update_trap_properties",
        "remove_entity",
    ),
    "attacks": ("add_attack", "update_attack", "remove_attack"),
}

LIBRARY_DESCRIPTIONS = {
    "rooms": "create, rename or remove rooms",
    "corridors": "join rooms with corridors, resize, turn or remove corridors",
    "entities": "add, change or remove enemies, traps and treasures in rooms and corridors",
    "attacks": "add, change or remove the attacks of enemies",
}

TOOL_NAMES: tuple[str, ...] = tuple(name for names in LIBRARIES.values() for name in names)


class LevelFunctions(RoomFunctions, CorridorFunctions, EntityFunctions, AttackFunctions):
    """All 16 level-editing functions, bound to one configuration of limits."""

    def __init__(self, config: LevelConfig = BENCHMARK_CONFIG) -> None:
        self.config = config


def make_toolbox(config: LevelConfig = BENCHMARK_CONFIG) -> Toolbox:
    """Build the Dungeon Despair toolbox with descriptions quoting ``config``'s limits."""
    functions = LevelFunctions(config)
    values = config.as_format_values()
    tools = []
    for library, names in LIBRARIES.items():
        for name in names:
            tool = Tool.from_function(getattr(functions, name), library=library)
            tools.append(_fill_limits(tool, values))
    return Toolbox(tools, library_descriptions=LIBRARY_DESCRIPTIONS)


def _fill_limits(tool: Tool, values: dict[str, str]) -> Tool:
    """Replace ``{limit}`` placeholders in a tool's texts by the configured numbers."""
    parameters = tuple(
        replace(p, description=p.description.format(**values)) for p in tool.parameters
    )
    return replace(tool, description=tool.description.format(**values), parameters=parameters)

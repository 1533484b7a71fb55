"""Domain ``llmaker``: editing Dungeon Despair levels (FREYR's LLMaker evaluation domain).

The state is a ``Level``; the 16 level-editing functions are the tools; two state views
exist: ``original`` (FREYR's text, the default, so the benchmark is comparable with the
paper) and ``rich`` (adds coordinates, exits, free directions, corridor cells, attacks).
Importing this module registers the domain.

Decisions on the spec's open points (details in the modules named):

* max hp is configurable; the default is 1000 so every hp the test requests ask for is
  allowed (``config.py``);
* ``create_room`` checks that ``room_from`` is not a corridor, not the current area
  (``rooms.py``);
* the corridor functions and ``update_attack`` work (``corridors.py``, ``attacks.py``);
* the "level unchanged" steps compare the full level (``steps.py``).
"""

from __future__ import annotations

from typing import Any

from freyr_dspy.benchmarks.llmaker._functions import make_toolbox
from freyr_dspy.benchmarks.llmaker._levels import load_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.benchmarks.llmaker._render import render_original, render_rich
from freyr_dspy.domains import Domain, register_domain
from freyr_dspy.tools import Toolbox

__all__ = ["LLMAKER"]


def _toolbox() -> Toolbox:
    return make_toolbox()


def _load(data: Any) -> Level:
    return load_level(data, source="level state")


def _render_original(state: Any) -> str:
    return render_original(_load(state))


def _render_rich(state: Any) -> str:
    return render_rich(_load(state))


LLMAKER = Domain(
    name="llmaker",
    description="Dungeon Despair level design: rooms, corridors, enemies, traps, treasures",
    make_toolbox=_toolbox,
    initial_state=Level,
    renderers={"original": _render_original, "rich": _render_rich},
    load_state=_load,
    example_message="Create a room set in a volcano, then add a fire imp to it.",
)

register_domain(LLMAKER)

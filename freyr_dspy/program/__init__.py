"""The program: ``FreyrProgram``, a domain's tools and state + one strategy module.

How one is built (``FreyrProgram.for_model``, the one factory; ``ProgramSpec`` its saved form,
read back by ``FreyrProgram.from_spec``), given models
(``assignment``: ``ROLE=ID`` specs), what its stored demos refer to (``name_refs``:
benchmark names held by position in committed files), and a conversation with it
(``session``: ``Session``, each message seeing the earlier turns' calls and results).
"""

from __future__ import annotations

from freyr_dspy.program._assignment import build_assignment
from freyr_dspy.program._name_refs import REFERENCE
from freyr_dspy.program._program import (
    AdapterName,
    FreyrProgram,
    ProgramMaker,
    render_conversation,
    to_prediction,
)
from freyr_dspy.program._session import Session, call_turn, turns_of
from freyr_dspy.program._spec import ProgramSpec

__all__ = [
    "REFERENCE",
    "AdapterName",
    "FreyrProgram",
    "ProgramMaker",
    "ProgramSpec",
    "Session",
    "build_assignment",
    "call_turn",
    "render_conversation",
    "to_prediction",
    "turns_of",
]

"""The program: ``FreyrProgram``, a domain's tools and state + one strategy module.

How one is built (``FreyrProgram.for_model``, the one factory; ``ProgramSpec`` its saved form,
read back by ``FreyrProgram.from_spec``), given models
(``assignment``: ``ROLE=ID`` specs), what its stored demos refer to (``name_refs``:
benchmark names held by position in committed files), and a conversation with it
(``session``: ``Session``, each message seeing the earlier turns' calls and results).
"""

from __future__ import annotations

from freyr_dspy.program._assignment import (
    bare_model_ids,
    build_assignment,
    main_model,
    override_assignment,
    parse_model_specs,
    parse_sampling_specs,
    resolve_label,
)
from freyr_dspy.program._name_refs import (
    REFERENCE,
    fill_names,
    fill_names_in_json,
    fingerprint,
    map_strings,
    refer_names,
)
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
    "bare_model_ids",
    "build_assignment",
    "call_turn",
    "fill_names",
    "fill_names_in_json",
    "fingerprint",
    "main_model",
    "map_strings",
    "override_assignment",
    "parse_model_specs",
    "parse_sampling_specs",
    "refer_names",
    "render_conversation",
    "resolve_label",
    "to_prediction",
    "turns_of",
]

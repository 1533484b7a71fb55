"""``Domain``: what a program needs to know about one application: tools, state and rendering."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from freyr_dspy.errors import UnknownNameError
from freyr_dspy.prompting import NO_STATE
from freyr_dspy.tools import Toolbox

__all__ = ["Domain", "StateRenderer", "render_json_state"]

StateRenderer = Callable[[Any], str]


def render_json_state(state: Any) -> str:
    """Default state rendering: compact JSON (pydantic models are dumped first)."""
    if state is None:
        return NO_STATE
    if isinstance(state, BaseModel):
        return state.model_dump_json()
    return json.dumps(state, default=str, ensure_ascii=False)


@dataclass(frozen=True)
class Domain:
    """A toolbox factory, a state factory and the state renderings a domain offers.

    ``renderers`` maps a view name to a function state -> text; the first one is the default.
    ``load_state`` turns JSON data (e.g. from ``--state FILE``) into the domain's state object.
    ``data_names`` lists the names the domain reads from benchmark data (tools, functions),
    in a fixed order: saved artifacts hold them by position (see ``name_refs``).
    """

    name: str
    description: str
    make_toolbox: Callable[[], Toolbox]
    initial_state: Callable[[], Any] = lambda: None
    renderers: dict[str, StateRenderer] = field(default_factory=lambda: {"json": render_json_state})
    load_state: Callable[[Any], Any] = lambda data: data
    example_message: str = ""
    data_names: Callable[[], Sequence[str]] = lambda: ()

    def renderer(self, view: str | None = None) -> StateRenderer:
        """Return the renderer called ``view`` (default: the first one).

        Raises:
            UnknownNameError: for a view the domain does not offer.
        """
        if view is None:
            return next(iter(self.renderers.values()))
        if view not in self.renderers:
            raise UnknownNameError("state view", view, self.renderers)
        return self.renderers[view]

"""The ``callnavi`` domain: its state names the CallNavi domain whose catalog a request sees.

One program answers questions of several CallNavi domains (bank, hr, ...) in one
evaluation, and the data directory is only known at run time, so the catalog is not fixed
when the program is built: the state carries the domain name and the data folder, and
``CallNaviProgram`` swaps in that domain's toolbox before each call. After a call the state
also holds the planned call list as the strategy produced it (``plan``), exactly what the
metrics score, and the raw model text it came from.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict

from freyr_dspy.benchmarks.callnavi._data import available_domains, callnavi_dir, load_domain
from freyr_dspy.benchmarks.callnavi._toolbox import make_toolbox
from freyr_dspy.domains import Domain, register_domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.tools import Toolbox

__all__ = ["CALLNAVI", "CallNaviProgram", "CallNaviState", "domain_toolbox", "state_toolbox"]


class CallNaviState(BaseModel):
    """Which CallNavi domain a question belongs to, and (after a call) the planned calls."""

    model_config = ConfigDict(frozen=True)

    domain: str = ""
    data_dir: str | None = None
    plan: dict[str, Any] | None = None


@functools.lru_cache(maxsize=32)
def domain_toolbox(data_dir: Path, domain: str) -> Toolbox:
    """The toolbox of one CallNavi domain (built once per process).

    Args:
        data_dir: the CallNavi folder, or a benchmark data directory holding ``callnavi/``.
        domain: the domain name (``bank``, ``hr``, ...).

    Raises:
        ConfigError: when the data or the domain is missing.
    """
    return make_toolbox(load_domain(callnavi_dir(data_dir), domain))


def state_toolbox(state: Any, data_dir: str | Path | None = None) -> Toolbox | None:
    """The toolbox a state names, or None when the state names no domain.

    Args:
        state: a ``CallNaviState`` (anything else names no domain).
        data_dir: the data folder to use when the state names none.

    Raises:
        ConfigError: when the state names a domain but no data directory is known.
    """
    if not isinstance(state, CallNaviState) or not state.domain:
        return None
    folder = state.data_dir or data_dir
    if not folder:
        raise ConfigError(
            f"CallNavi domain {state.domain!r} needs a data directory: put data_dir in the "
            "state or give it to CallNaviProgram(data_dir=...)"
        )
    return domain_toolbox(Path(folder), state.domain)


def render_state(state: Any) -> str:
    """What roles of generic strategies (gated, freyr) see as the state."""
    if isinstance(state, CallNaviState) and state.domain:
        return f"CallNavi domain: {state.domain}"
    return "(no state)"


def _load_state(data: Any) -> CallNaviState:
    return CallNaviState.model_validate(data)


class CallNaviProgram(FreyrProgram):
    """A ``FreyrProgram`` whose toolbox follows the domain named by each request's state.

    This lets every strategy - also the generic ``gated``, ``freyr`` and ``nlt`` - see the
    right catalog. NOTE: the toolbox attribute changes per call, so one instance must not
    serve two threads at once (the evaluation harness builds one program per unit).

    Args:
        data_dir: the CallNavi data folder, for states that name a domain but no folder.
        **kwargs: as for ``FreyrProgram``.
    """

    def __init__(self, *args: Any, data_dir: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.data_dir = str(data_dir) if data_dir is not None else None

    def forward(
        self,
        message: str,
        conversation: str | Sequence[Any] = "",
        state: Any = None,
        toolbox: Toolbox | None = None,
        calls_only: bool = False,
    ) -> dspy.Prediction:
        """Select the state's domain catalog, then handle the message as usual."""
        coerced = self.coerce_state(state)
        domain_toolbox = state_toolbox(coerced, self.data_dir)
        if domain_toolbox is not None:
            self.toolbox = domain_toolbox
        return super().forward(message, conversation, coerced, toolbox, calls_only)

    def data_names(self) -> list[str]:
        """Every domain's ``data_names`` in domain order, each name at its first position.

        Demos come from questions of several domains, so an artifact refers to the union.
        """
        if self.data_dir is None:
            return []
        folder = callnavi_dir(Path(self.data_dir))
        names: dict[str, None] = {}
        for domain in available_domains(folder):
            names.update(dict.fromkeys(load_domain(folder, domain).data_names))
        return list(names)


CALLNAVI = Domain(
    name="callnavi",
    description="CallNavi API routing: the state names the domain (bank, hr, ...) and data dir",
    make_toolbox=lambda: Toolbox([]),
    initial_state=CallNaviState,
    renderers={"text": render_state},
    load_state=_load_state,
)

register_domain(CALLNAVI)

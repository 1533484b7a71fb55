"""The plain domain: a user's toolbox and nothing else (no state of its own, no example text).

``FreyrProgram(toolbox=box)`` gets this domain: the roles see the tools, the request and
whatever state the caller passes (rendered as JSON), never another domain's description or
state.
"""

from __future__ import annotations

from freyr_dspy.domains._base import Domain, render_json_state
from freyr_dspy.tools import Toolbox

__all__ = ["PLAIN_DOMAIN_NAME", "plain_domain"]

#: The name programs built on a bare toolbox record (artifacts rebuild them with a toolbox).
PLAIN_DOMAIN_NAME = "tools"


def plain_domain(toolbox: Toolbox) -> Domain:
    """A domain made of ``toolbox`` alone; state is whatever the caller passes, as JSON."""
    return Domain(
        name=PLAIN_DOMAIN_NAME,
        description="the caller's own tools",
        make_toolbox=lambda: toolbox,
        renderers={"json": render_json_state},
    )

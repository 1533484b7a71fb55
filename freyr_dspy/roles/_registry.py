"""The role registry: role id -> module class; the roles that register themselves import it.

Separate from the package face so that a role module registering itself (``register_role``)
does not import the face while the face is importing it.
"""

from __future__ import annotations

from freyr_dspy.errors import UnknownRoleError
from freyr_dspy.registry import Registry
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._chat import ChatResponder
from freyr_dspy.roles._intent import IntentClassifier
from freyr_dspy.roles._parameters import ParameterFiller
from freyr_dspy.roles._summary import Summarizer

__all__ = ["ROLES", "load_roles", "register_role", "role_class"]

#: The modules named here register further roles when imported (strategies' own roles);
#: plugins (the benchmarks' own roles) register theirs with ``register_role``.
ROLES: Registry[type[Role]] = Registry(
    "role",
    (
        "freyr_dspy.roles._asks",
        "freyr_dspy.roles._confirm",
        "freyr_dspy.roles._tool_selection",
        "freyr_dspy.roles._library",
        "freyr_dspy.roles._prompted",
        "freyr_dspy.strategies._native",
    ),
    intent=IntentClassifier,
    parameters=ParameterFiller,
    summary=Summarizer,
    chat=ChatResponder,
)
load_roles = ROLES.load_all
register_role = ROLES.register


def role_class(name: str) -> type[Role]:
    """Return the module class of a role.

    Raises:
        UnknownRoleError: for an unregistered role id.
    """
    if name not in ROLES:
        ROLES.load_all()
    if name not in ROLES:
        raise UnknownRoleError(name, ROLES)
    return ROLES[name]

"""The roles: one DSPy module per role, registered under its snake_case id.

Role ids are identical everywhere: program attributes, artifact keys, Optuna parameter names
and CLI options (``--model intent=...``). Strategies add their own roles to ``ROLES``.
"""

from __future__ import annotations

from freyr_dspy.errors import UnknownRoleError
from freyr_dspy.roles.base import Role
from freyr_dspy.roles.chat import ChatResponder, ChatSignature
from freyr_dspy.roles.intent import IntentClassifier, IntentSignature
from freyr_dspy.roles.parameters import ParameterFiller, ParametersSignature
from freyr_dspy.roles.summary import Summarizer, SummarySignature

ROLES: dict[str, type[Role]] = {
    "intent": IntentClassifier,
    "parameters": ParameterFiller,
    "summary": Summarizer,
    "chat": ChatResponder,
}


#: Modules that register further roles when imported (strategies' own roles).
ROLE_MODULES = (
    "freyr_dspy.roles.confirm",
    "freyr_dspy.roles.tool_selection",
    "freyr_dspy.roles.library",
    "freyr_dspy.roles.prompted",
    "freyr_dspy.strategies.native",
    "freyr_dspy.callnavi.roles",
)


def load_roles() -> dict[str, type[Role]]:
    """Import every role module and return the registry."""
    from freyr_dspy._plugins import import_optional

    import_optional(ROLE_MODULES)
    return ROLES


def register_role(name: str, module: type[Role]) -> None:
    """Register a role module under its id (strategies call this for their own roles)."""
    ROLES[name] = module


def role_class(name: str) -> type[Role]:
    """Return the module class of a role.

    Raises:
        UnknownRoleError: for an unregistered role id.
    """
    if name not in ROLES:
        load_roles()
    if name not in ROLES:
        raise UnknownRoleError(name, ROLES)
    return ROLES[name]


__all__ = [
    "ROLES",
    "ChatResponder",
    "ChatSignature",
    "IntentClassifier",
    "IntentSignature",
    "ParameterFiller",
    "ParametersSignature",
    "Role",
    "Summarizer",
    "SummarySignature",
    "load_roles",
    "register_role",
    "role_class",
]

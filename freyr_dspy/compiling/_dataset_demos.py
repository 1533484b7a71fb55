"""What a compile on a user's tool-call examples keeps in its demos, by default.

A dataset's gold is calls, not replies, and its tools are the user's: ``freyr_dspy.compile``
and ``freyr compile --examples`` give demos to the roles that decide the calls only, and leave
the tools' own text out of them unless asked to keep it.
"""

from __future__ import annotations

from freyr_dspy.program import FreyrProgram

__all__ = ["TOOL_TEXT_FIELDS", "deciding_roles", "tool_text_fields"]

#: Role inputs that hold the tools' own text (catalogs, specs): left out of demos unless asked,
#: so an artifact compiled for a user's tools does not copy their descriptions.
TOOL_TEXT_FIELDS = ("tools", "tool", "libraries")


def deciding_roles(program: FreyrProgram) -> tuple[str, ...]:
    """The roles that decide the calls: every role but the ones that write the reply.

    A dataset's gold is calls, not replies: the summary and chat demos would show
    placeholder replies ("call recorded"), so they get none.
    """
    return tuple(role for role in program.role_names if role not in _REPLY_ROLES)


_REPLY_ROLES = ("summary", "chat")


def tool_text_fields(program: FreyrProgram) -> tuple[str, ...]:
    """The ``TOOL_TEXT_FIELDS`` that some role of ``program`` takes as input."""
    inputs = {f for _, p in program.named_predictors() for f in p.signature.input_fields}
    return tuple(f for f in TOOL_TEXT_FIELDS if f in inputs)

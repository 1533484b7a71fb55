"""What the program writes into a context input when there is nothing to say.

A role's signature has context inputs (earlier turns, the application's state, a failed
attempt's error, the observations so far) that are often empty. The program fills each with
one placeholder from here, and the lean adapter (``freyr_dspy.prompting._adapters``) leaves
an input out of the prompt when ``says_nothing`` finds only its placeholder in it: the model
learns nothing from "(none)", and ~8 tokens each were evaluated again on every call. Producers and
the adapter read the same table, so a placeholder cannot drift from what the adapter drops.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CONTEXT_PLACEHOLDERS",
    "NO_CONVERSATION",
    "NO_FEEDBACK",
    "NO_OBSERVATIONS",
    "NO_STATE",
    "says_nothing",
]

NO_CONVERSATION = "(none)"
NO_STATE = "(no state)"
NO_FEEDBACK = "none"
NO_OBSERVATIONS = "none"

#: Context input name -> its placeholder. (The message is not here: "none" can be an answer.)
CONTEXT_PLACEHOLDERS = {
    "conversation": NO_CONVERSATION,
    "state": NO_STATE,
    "feedback": NO_FEEDBACK,
    "observations": NO_OBSERVATIONS,
}
_NOTHING = frozenset({"", *CONTEXT_PLACEHOLDERS.values()})


def says_nothing(name: str, value: Any) -> bool:
    """Tell whether input ``name`` is a context input holding only a "nothing here" placeholder."""
    return (
        name in CONTEXT_PLACEHOLDERS
        and isinstance(value, str)
        and value.strip().lower() in _NOTHING
    )

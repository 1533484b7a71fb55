"""Calling the planned tools, and retrying a failed call with its error as feedback.

``loop`` is the retry loop every tool-calling strategy goes through (``call_until_exhausted``
under a ``CallPolicy``); ``blame`` reads which arguments an error complains about and which
values it lists, so a retry can be kept from writing them again (``prompting.narrowing``).
"""

from freyr_dspy.strategies.retry._loop import (
    call_until_exhausted,
    look_up,
    returned_results,
    warm_parameters,
    with_results,
)

__all__: list[str] = []  # see the submodules: loop, blame

__all__ = ["call_until_exhausted", "look_up", "returned_results", "warm_parameters", "with_results"]

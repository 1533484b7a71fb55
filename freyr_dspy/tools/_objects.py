"""Tools that are the methods of a live object: the app a user already has.

An app keeps its state in an object (a cart, a calendar, a smart home); its operations are
the object's methods. ``tools_of(app)`` makes each public method a ``Tool`` (its type hints and
docstring, as for any function) that acts on that very object, so a conversation's calls see
what the earlier ones changed. A call that raises leaves the object as it was: its attributes
are copied before the call and put back after a failure, as ``Toolbox.execute`` does for a
state passed to a tool.

A method is a tool unless its name starts with ``_`` or is listed in the class's
``__freyr_private__`` (methods the app uses itself, such as ``snapshot``); ``methods=`` picks
the tools by name instead. Methods listed in ``__freyr_reads__`` only look things up: their
tools are ``read_only``, which the program may call on its own to find an id an action needs.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from freyr_dspy.errors import ConfigError
from freyr_dspy.tools._tool import Tool

__all__ = ["READS_ATTRIBUTE", "method_names", "tools_of"]

#: A class attribute naming public methods that are not tools.
PRIVATE_ATTRIBUTE = "__freyr_private__"
#: A class attribute naming the methods that only read (their tools are ``read_only``).
READS_ATTRIBUTE = "__freyr_reads__"


def method_names(app: object) -> list[str]:
    """The public methods of ``app``'s class that are tools, in the order the class defines them."""
    private = set(getattr(type(app), PRIVATE_ATTRIBUTE, ()))
    names = []
    for klass in reversed(type(app).__mro__[:-1]):  # the class's own after its bases'
        for name, value in vars(klass).items():
            if name.startswith("_") or name in private or name in names:
                continue
            if inspect.isfunction(value):
                names.append(name)
    return names


def tools_of(
    app: object, methods: Sequence[str] | None = None, *, library: str | None = None
) -> list[Tool]:
    """The tools of ``app``: its methods (see the module docstring), each acting on ``app``.

    Raises:
        ConfigError: a name in ``methods`` that is no method of ``app``.
    """
    names = list(methods) if methods is not None else method_names(app)
    reads = set(getattr(type(app), READS_ATTRIBUTE, ()))
    tools = []
    for name in names:
        bound = getattr(app, name, None)
        if not callable(bound):
            raise ConfigError(f"{type(app).__name__} has no method {name!r} to make a tool of")
        tool = Tool.from_function(bound, library=library, read_only=name in reads)
        tools.append(dataclasses.replace(tool, func=_undone_on_failure(app, bound)))
    return tools


def _undone_on_failure(app: object, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method``, putting ``app``'s attributes back as they were when it raises."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        before = copy.deepcopy(vars(app))
        try:
            return method(*args, **kwargs)
        except Exception:
            vars(app).clear()
            vars(app).update(before)
            raise

    return call

"""Every freyr exception, split by whose fault it is (the pydantic-ai idea).

* ``ConfigError`` - the caller asked for something that cannot work (bad model id, unknown role).
* ``DataError`` - a data file is malformed; always carries ``path:line``.
* ``ArtifactError`` - a compiled artifact is corrupt, or was built by other code
  (version or signature skew).
* ``BackendError`` - a model backend failed; carries the role and model for context.
* ``ToolError`` - a tool call could not be made (the program turns it into an error outcome).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

__all__ = [
    "ArtifactError",
    "BackendError",
    "ConfigError",
    "DataError",
    "FakeLMError",
    "FreyrError",
    "ToolError",
    "ToolUnsupportedError",
    "UnknownModelError",
    "UnknownNameError",
    "UnknownRoleError",
    "did_you_mean",
    "exception_chain",
    "one_line",
]

#: Characters of an exception's text ``one_line`` keeps by default (a log line, not a page).
ONE_LINE_LIMIT = 300


class FreyrError(Exception):
    """Base class of every error raised by freyr-dspy."""


class ConfigError(FreyrError):
    """A mistake by whoever calls the library: fix the call or the configuration."""


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return a ' Did you mean ...?' suffix for the closest choices, or an empty string."""
    close = difflib.get_close_matches(value, list(choices), n=3, cutoff=0.5)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


class UnknownModelError(ConfigError):
    """A model id that no backend understands."""

    def __init__(self, model_id: str, known: Iterable[str], hint: str = "") -> None:
        self.model_id = model_id
        message = f"unknown model id {model_id!r}.{did_you_mean(model_id, known)}"
        super().__init__(message + (f" {hint}" if hint else ""))


class UnknownRoleError(ConfigError):
    """A role name that the program or strategy does not have."""

    def __init__(self, role: str, known: Iterable[str]) -> None:
        self.role = role
        known = list(known)
        super().__init__(
            f"unknown role {role!r}; expected one of {', '.join(known)}.{did_you_mean(role, known)}"
        )


class UnknownNameError(ConfigError):
    """An unknown name in a registry (strategy, domain, benchmark, ...)."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.name = name
        known = sorted(known)
        hint = did_you_mean(name, known)
        super().__init__(f"unknown {kind} {name!r}; expected one of {', '.join(known)}.{hint}")


class DataError(FreyrError):
    """A data file is malformed. The message starts with ``path:line``."""

    def __init__(self, path: object, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class ArtifactError(FreyrError):
    """A compiled artifact is corrupt, truncated, or does not match this code."""


class BackendError(FreyrError):
    """A model backend failed while playing a role."""

    def __init__(self, message: str, *, role: str | None = None, model: str | None = None) -> None:
        self.role = role
        self.model = model
        context = ", ".join(f"{k}={v}" for k, v in (("role", role), ("model", model)) if v)
        super().__init__(f"{message} ({context})" if context else message)


class ToolUnsupportedError(BackendError):
    """The model or backend cannot do native tool calling."""


class ToolError(FreyrError):
    """A tool call that could not be carried out; its message is shown to the model as feedback."""


class FakeLMError(FreyrError):
    """A fake LM was called with a prompt its script does not cover (strict by design)."""


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then the exception it was raised from (``__cause__``, else ``__context__``), ..."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def one_line(exc: BaseException, *, limit: int | None = ONE_LINE_LIMIT, typed: bool = False) -> str:
    """An exception as one line: its text with white space folded, else its type's name.

    Args:
        exc: the exception to describe.
        limit: characters of its text kept (None: all of them).
        typed: start with the type's name (``ValueError: ...``), for where the kind is news.

    Returns:
        ``"bad value 3"``, ``"ValueError: bad value 3"``, or ``"ValueError"`` for an empty text.
    """
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:limit]
    if not text:
        return name
    return f"{name}: {text}" if typed else text

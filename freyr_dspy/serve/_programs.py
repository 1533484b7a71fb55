"""The programs a server answers for, by the name a request's ``model`` field gives.

Names are fixed when the server starts (a compiled artifact's file stem, a model id given on
the command line): a request can only pick among them, so nothing it sends reaches a model
file, a remote provider or the file system. ``fallback`` lets one program answer every other
name, for clients whose model name cannot be changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from freyr_dspy.backends import runs_in_process
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.serve._context import context_window
from freyr_dspy.serve._errors import bad_request, unknown_model
from freyr_dspy.serve._protocol import ModelCard, ModelList
from freyr_dspy.tools import Toolbox, toolbox_changes

__all__ = ["ServedProgram", "ServedPrograms"]


@dataclass
class ServedProgram:
    """One program and what the server needs to know about it."""

    name: str
    program: FreyrProgram
    #: Where it comes from, for ``/v1/models``: ``compiled/x.json`` or ``strategy freyr``.
    source: str = ""
    #: Other names requests may use for it (the artifact path as given).
    aliases: tuple[str, ...] = ()
    #: The smallest context of its models, in tokens; None: unknown, not checked.
    context_tokens: int | None = None
    #: The fingerprint of the tools it was compiled for (``ArtifactMeta.toolbox``), if any.
    compiled_for: Mapping[str, str] | None = None
    #: Accept requests whose tools differ from ``compiled_for`` (``--allow-changed-tools``).
    allow_changed_tools: bool = False
    created: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        if self.context_tokens is None:
            self.context_tokens = context_window(self.program)

    def check_tools(self, toolbox: Toolbox | None) -> None:
        """Refuse tools other than those the program was compiled for (unless allowed).

        Raises:
            ApiError: 400 ``tools_changed``, naming the tools missing, changed or new.
        """
        if self.compiled_for is None or self.allow_changed_tools or toolbox is None:
            return
        changes = toolbox_changes(self.compiled_for, toolbox)
        if changes:
            raise bad_request(
                f"{self.name} was compiled for other tools ({'; '.join(changes)}); send those "
                "tools, or start the server with --allow-changed-tools",
                param="tools",
                code="tools_changed",
            )


class ServedPrograms:
    """The programs of one server, looked up by name."""

    def __init__(self, programs: Iterable[ServedProgram], *, fallback: bool = False) -> None:
        self.programs = list(programs)
        if not self.programs:
            raise ConfigError("freyr serve needs a program: --program FILE or --model ID")
        self.fallback = fallback
        self._by_name: dict[str, ServedProgram] = {}
        for served in self.programs:
            for name in (served.name, *served.aliases):
                if self._by_name.setdefault(name, served) is not served:
                    raise ConfigError(f"two served programs are both named {name!r}")

    @property
    def names(self) -> list[str]:
        """The names ``/v1/models`` lists."""
        return [served.name for served in self.programs]

    def pick(self, name: str) -> ServedProgram:
        """The program a request's ``model`` names (the first one under ``fallback``).

        Raises:
            ApiError: 404 ``model_not_found``.
        """
        served = self._by_name.get(name)
        if served is not None:
            return served
        if self.fallback:
            return self.programs[0]
        raise unknown_model(name, self.names)

    def check_concurrency(self, concurrency: int) -> None:
        """Refuse running requests at once on a model that runs in this process.

        Requests share a program (none changes it), but an in-process llama.cpp model holds
        one context and answers one call at a time: more requests would only queue inside it
        and evict each other's prefix cache. Several such models scale as model servers, or
        one server behind several ``freyr serve`` processes (docs/serve.md).

        Raises:
            ConfigError: when ``concurrency`` > 1 and a program runs a model in this process.
        """
        if concurrency <= 1:
            return
        for served in self.programs:
            lms = (p.lm for p in served.program.predictors() if p.lm is not None)
            local = sorted({lm.model for lm in lms if runs_in_process(lm.model)})
            if local:
                raise ConfigError(
                    f"--concurrency {concurrency}: {served.name} runs {', '.join(local)} in "
                    "this process, which answers one call at a time; leave --concurrency at 1, "
                    "or run the model in a server (python -m llama_cpp.server) and serve it "
                    "with --model openai/NAME --api-base URL"
                )

    def model_list(self) -> ModelList:
        """The body of ``GET /v1/models``."""
        return ModelList(
            data=[
                ModelCard(id=s.name, created=s.created, freyr_source=s.source)
                for s in self.programs
            ]
        )

"""``Toolbox``: a domain's tools, grouped in libraries, rendered as catalogs, executed safely.

Tools come from Python functions and pydantic models, or as users bring them: OpenAI tool
dicts (``Toolbox.from_openai``), an MCP server (``Toolbox.from_mcp``) or ``dspy.Tool``s.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from freyr_dspy.errors import ConfigError, ToolError, did_you_mean
from freyr_dspy.schemas import Outcome
from freyr_dspy.tools._openai_spec import tools_from_openai
from freyr_dspy.tools._schema import describe_type
from freyr_dspy.tools._tool import STATE_PARAMETER, Tool

if TYPE_CHECKING:
    from mcp import StdioServerParameters

    from freyr_dspy.tools._mcp import McpConnection

__all__ = [
    "CatalogLevel",
    "Execution",
    "Toolbox",
    "catalog_names",
    "normalize_name",
    "recorded_outcome",
    "render_tool_spec",
]

logger = logging.getLogger(__name__)

CatalogLevel = Literal["names", "brief", "full"]

#: A tool's first line in a rendered catalog or spec (``Toolbox.catalog``): ``- name: ...``.
_CATALOG_LINE = re.compile(r"^- ([^\s:]+)", re.M)


def catalog_names(text: str) -> list[str]:
    """The tool names a rendered catalog or tool spec lists, in order (what a prompt offers)."""
    return _CATALOG_LINE.findall(text)


@dataclass(frozen=True)
class Execution:
    """An outcome plus the state to keep: the new state on success, the old one on failure."""

    outcome: Outcome
    state: Any
    arguments: dict[str, Any] = field(default_factory=dict)


def recorded_outcome(name: str) -> Outcome:
    """The outcome of a spec-only call: recorded, nothing executed (benchmarks score the call)."""
    return Outcome(ok=True, message=f"{name}: call recorded (spec-only tool, not executed).")


def normalize_name(name: str) -> str:
    """Key used to match model-written tool names: case, spaces, dashes and quotes ignored."""
    return re.sub(r"[\s_\-`'\"*]+", "", name).lower()


class Toolbox:
    """An ordered set of tools, optionally grouped into libraries (for GeckOpt gating)."""

    def __init__(
        self, tools: Iterable[Tool], library_descriptions: dict[str, str] | None = None
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ConfigError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
        self._by_key = {normalize_name(name): tool for name, tool in self._tools.items()}
        self.library_descriptions = dict(library_descriptions or {})
        self._closers: list[Callable[[], None]] = []

    @classmethod
    def from_openai(
        cls,
        tools: Sequence[Mapping[str, Any]],
        functions: Mapping[str, Callable[..., Any]] | None = None,
        *,
        library: str | None = None,
    ) -> Toolbox:
        """Build a toolbox from OpenAI tool dicts, as users copy them from an API call.

        Args:
            tools: ``{"type": "function", "function": {name, description, parameters}}`` or
                bare ``{name, description, parameters}`` dicts, in catalog order.
            functions: tool name -> Python callable that executes it; tools without one are
                spec-only (their calls are recorded, not executed).
            library: the library of every tool (for gating).

        Raises:
            ConfigError: in one line, for a malformed dict or a function naming no tool.
        """
        return cls(tools_from_openai(tools, functions, library=library))

    @classmethod
    def from_object(
        cls, app: object, methods: Sequence[str] | None = None, *, library: str | None = None
    ) -> Toolbox:
        """The methods of a live object as tools that act on it (``tools._objects``).

        ``Toolbox.from_object(cart)`` offers every public method of ``cart`` (``methods=``
        picks them): each call changes ``cart`` itself, so the next request sees what the
        last one did, and a call that raises leaves ``cart`` as it was.

        Raises:
            ConfigError: a name in ``methods`` that is no method of ``app``.
        """
        from freyr_dspy.tools._objects import tools_of

        return cls(tools_of(app, methods, library=library))

    @classmethod
    def from_mcp(
        cls,
        server: McpConnection | StdioServerParameters | str | Sequence[str],
        *,
        library: str | None = None,
        timeout: float = 30.0,
    ) -> Toolbox:
        """Build a toolbox from the tools of an MCP server; each call runs on the server.

        Args:
            server: an open ``McpConnection`` (shared, left open), or what starts one that the
                toolbox owns and ``close()`` ends: a command (``["python", "server.py"]`` or
                ``"python server.py"``), ``mcp.StdioServerParameters``, or an ``http(s)://``
                URL of a Streamable HTTP server.
            library: the library of every tool (for gating).
            timeout: seconds to wait for the server to start, list its tools or answer a call.

        Raises:
            ConfigError: when the server cannot be started or lists an unusable tool.
        """
        from freyr_dspy.tools._mcp import McpConnection, mcp_tools

        if isinstance(server, McpConnection):
            return cls(mcp_tools(server.open(), library=library))
        connection = McpConnection(server, timeout=timeout)
        try:
            box = cls(mcp_tools(connection.open(), library=library))
        except BaseException:
            connection.close()
            raise
        box._closers.append(connection.close)
        return box

    def close(self) -> None:
        """Release what the toolbox holds open (an MCP server it started); safe to repeat."""
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    @property
    def names(self) -> list[str]:
        """Tool names in catalog order."""
        return list(self._tools)

    @property
    def libraries(self) -> dict[str, list[str]]:
        """Library name -> tool names; tools without a library fall under ``general``."""
        groups: dict[str, list[str]] = {}
        for tool in self._tools.values():
            groups.setdefault(tool.library or "general", []).append(tool.name)
        return groups

    def resolve(self, name: str) -> Tool | None:
        """Find a tool by a model-written name, tolerating case, spacing and quotes."""
        return self._tools.get(name) or self._by_key.get(normalize_name(name))

    def get(self, name: str) -> Tool:
        """Return the tool called ``name``.

        Raises:
            ToolError: for an unknown name, with the closest known names.
        """
        tool = self.resolve(name)
        if tool is None:
            raise ToolError(
                f"unknown tool {name!r}; available tools: {', '.join(self.names)}."
                + did_you_mean(name, self.names)
            )
        return tool

    def spec_only(self) -> Toolbox:
        """A copy whose tools record their calls instead of running them (evaluation, serving)."""
        tools = (dataclasses.replace(t, func=None, takes_state=False) for t in self._tools.values())
        return Toolbox(tools, self.library_descriptions)

    def subset(self, names: Sequence[str] = (), libraries: Sequence[str] = ()) -> Toolbox:
        """Return a toolbox with only the named tools and the tools of the named libraries."""
        wanted = {t.name for n in names if (t := self.resolve(n))}
        groups = self.libraries
        for library in libraries:
            wanted.update(groups.get(library, []))
        return Toolbox(
            (t for t in self._tools.values() if t.name in wanted), self.library_descriptions
        )

    def catalog(self, level: CatalogLevel = "brief", extra: dict[str, str] | None = None) -> str:
        """Render the tools for a prompt.

        Args:
            level: ``names`` (one name per line), ``brief`` (name: one-line description) or
                ``full`` (description plus every parameter's type, requirement and meaning).
            extra: pseudo-tools to list after the tools (e.g. ``conversation``), name ->
                description. Last, because small models over-pick what a list starts with:
                Qwen2.5-Coder-0.5B's intent role got 2 of 19 one-tool requests of our set
                right with ``conversation`` listed first, 8 of 19 with it listed last.
        """
        lines = []
        for tool in self._tools.values():
            if level == "names":
                lines.append(f"- {tool.name}")
            elif level == "brief":
                lines.append(f"- {tool.name}: {tool.summary}")
            else:
                lines.append(render_tool_spec(tool))
        for name, desc in (extra or {}).items():
            lines.append(f"- {name}: {desc}" if level != "names" else f"- {name}")
        return "\n".join(lines)

    def library_catalog(self) -> str:
        """Render libraries with their description (or their tool names) for a gating role."""
        lines = []
        for library, names in self.libraries.items():
            desc = self.library_descriptions.get(library) or "tools: " + ", ".join(names)
            lines.append(f"- {library}: {desc}")
        return "\n".join(lines)

    def execute(self, name: str, arguments: dict[str, Any], state: Any = None) -> Execution:
        """Validate and run one tool call; never raises for bad input or tool failures.

        The tool works on a deep copy of ``state``; the copy is returned only when the call
        succeeds, so a failed call loses nothing.
        """
        try:
            tool = self.get(name)
            validated = tool.validate_arguments(arguments)
        except ToolError as exc:
            return Execution(Outcome(ok=False, message=str(exc)), state, arguments)
        if tool.func is None:
            return Execution(recorded_outcome(tool.name), state, validated)
        working = _copy_state(state) if tool.takes_state else state
        kwargs = dict(validated)
        if tool.takes_state:
            kwargs[STATE_PARAMETER] = working
        try:
            returned = tool.func(**kwargs)
        except Exception as exc:  # a tool failure becomes feedback for the model, not a crash
            logger.debug("tool %s failed", tool.name, exc_info=True)
            message = str(exc) or type(exc).__name__
            return Execution(
                Outcome(ok=False, message=f"{tool.name} failed: {message}"), state, validated
            )
        return Execution(_as_outcome(returned), working, validated)


def render_tool_spec(tool: Tool) -> str:
    """Render one tool with its full parameter specification."""
    lines = [f"- {tool.name}: {tool.description}"]
    for p in tool.parameters:
        flag = "required" if p.required else f"optional, default {p.default!r}"
        choices = f", one of {', '.join(map(str, p.enum))}" if p.enum else ""
        desc = f": {p.description}" if p.description else ""
        # A JSON-schema tool shows nested shapes: "array of {sku: string, qty?: integer}".
        shown = describe_type(p.schema) if p.schema and not p.enum else p.type
        lines.append(f"    - {p.name} ({shown}, {flag}{choices}){desc}")
    if not tool.parameters:
        lines.append("    (no parameters)")
    return "\n".join(lines)


def _copy_state(state: Any) -> Any:
    if isinstance(state, BaseModel):
        return state.model_copy(deep=True)
    return copy.deepcopy(state)


def _as_outcome(returned: Any) -> Outcome:
    if isinstance(returned, Outcome):
        return returned
    if returned is None:
        return Outcome(ok=True, message="Done.")
    if isinstance(returned, str):
        return Outcome(ok=True, message=returned)
    if isinstance(returned, BaseModel):
        return Outcome(ok=True, message=returned.model_dump_json(), data=returned.model_dump())
    try:
        return Outcome(ok=True, message=json.dumps(returned, default=str), data=returned)
    except TypeError:
        return Outcome(ok=True, message=str(returned))

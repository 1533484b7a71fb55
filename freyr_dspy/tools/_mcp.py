"""Tools of an MCP server: listed once, every call sent to the server.

NOTE: one session per connection, kept open on a background event-loop thread for the
toolbox's life. One session per call would restart a stdio server for every call (hundreds of
milliseconds each, seconds for heavy servers) and lose whatever a server keeps between calls.
The thread is a daemon and a finalizer closes the session, so a forgotten ``close()`` neither
hangs the interpreter at exit nor leaves the server running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import shlex
import threading
import weakref
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from freyr_dspy.errors import ConfigError, FreyrError, one_line

__all__ = ["McpConnection", "mcp_tools", "server_parameters"]

try:
    import mcp_types
    from mcp import Client, StdioServerParameters
except ImportError as exc:  # mcp 1.x has neither mcp.Client nor mcp_types
    raise ConfigError("MCP tools need the MCP SDK 2: pip install 'mcp>=2,<3'") from exc
from freyr_dspy.schemas import Outcome
from freyr_dspy.tools._tool import Tool

T = TypeVar("T")
_Ready = concurrent.futures.Future[tuple[Client, asyncio.Event]]
_MAX_PAGES = 100  # a server that paginates forever must not hang the listing


class McpConnection:
    """A session with one MCP server, usable from synchronous code and from any thread."""

    def __init__(
        self, server: StdioServerParameters | str | Sequence[str], *, timeout: float = 30.0
    ) -> None:
        """Describe the connection; nothing starts before ``open()``.

        Args:
            server: a command (``["python", "server.py"]`` or ``"python server.py"``),
                ``mcp.StdioServerParameters``, or an ``http(s)://`` Streamable HTTP URL.
            timeout: seconds to wait for the server to start, list its tools or answer a call.

        Raises:
            ConfigError: for an empty command or a value of another kind.
        """
        self.server = server_parameters(server)
        self.timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Client | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()  # open/close from several threads start one session

    @property
    def label(self) -> str:
        """The server as a user would name it (its command line or URL)."""
        if isinstance(self.server, str):
            return self.server
        return shlex.join([self.server.command, *self.server.args])

    def open(self) -> McpConnection:
        """Start the server (or connect to it) and hold the session open; idempotent.

        Raises:
            ConfigError: when the server does not start or answer within ``timeout``.
        """
        with self._lock:
            if self._client is None:
                self._start()
        return self

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="freyr-mcp", daemon=True)
        thread.start()
        ready: _Ready = concurrent.futures.Future()
        client = Client(self.server, read_timeout_seconds=self.timeout)
        held = asyncio.run_coroutine_threadsafe(_hold(client, ready), loop)
        self._finalizer = weakref.finalize(self, _shut, loop, thread, ready, held, self.timeout)
        self._loop = loop
        try:
            self._client = ready.result(self.timeout)[0]
        except BaseException as exc:
            self._close()
            raise ConfigError(
                f"MCP server {self.label!r} did not start: {_reason(exc)} "
                "(check the command; the server's own errors are on stderr)"
            ) from exc

    def list_tools(self) -> list[mcp_types.Tool]:
        """Return every tool the server lists (all pages).

        Raises:
            ConfigError: when the server cannot list its tools.
        """
        try:
            return self._run(_list_all)
        except FreyrError:
            raise
        except Exception as exc:
            raise ConfigError(f"MCP server {self.label!r}: listing tools failed: {exc}") from exc

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Outcome:
        """Call one tool; an error the server reports becomes a failed outcome.

        Raises:
            TimeoutError: when the server does not answer within ``timeout``.
            ConfigError: when the connection is not open.
        """
        result = self._run(
            lambda client: client.call_tool(name, arguments, read_timeout_seconds=self.timeout)
        )
        return _outcome(name, result)

    def close(self) -> None:
        """End the session (and a stdio server's process); safe to repeat."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._client = self._loop = None

    def __enter__(self) -> McpConnection:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, call: Callable[[Client], Awaitable[T]]) -> T:
        client, loop = self._client, self._loop
        if client is None or loop is None:
            raise ConfigError(f"MCP connection to {self.label!r} is not open; call open() first")

        async def run() -> T:
            return await call(client)

        future = asyncio.run_coroutine_threadsafe(run(), loop)
        try:
            return future.result(self.timeout + 1)
        except TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from MCP server within {self.timeout:g} s") from None


def server_parameters(
    server: StdioServerParameters | str | Sequence[str],
) -> StdioServerParameters | str:
    """Read what names a server: stdio parameters, a URL, or a command line.

    Raises:
        ConfigError: for an empty command or a value of another kind.
    """
    if isinstance(server, StdioServerParameters):
        return server
    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return server
    parts = shlex.split(server) if isinstance(server, str) else server
    if not isinstance(parts, Sequence) or not all(isinstance(p, str) for p in parts):
        raise ConfigError(
            "MCP server: expected a command (list of strings or one string), "
            f"StdioServerParameters or an http(s) URL, got {type(server).__name__}"
        )
    if not parts:
        raise ConfigError("MCP server: the command is empty")
    return StdioServerParameters(command=parts[0], args=list(parts[1:]))


def mcp_tools(connection: McpConnection, *, library: str | None = None) -> list[Tool]:
    """One freyr tool per tool of an open connection; calling it calls the server."""
    return [
        Tool.from_json_schema(
            spec.name,
            spec.description or spec.title or "",
            spec.input_schema,
            function=_RemoteCall(connection, spec.name),
            library=library,
            read_only=bool(spec.annotations and spec.annotations.read_only_hint),
        )
        for spec in connection.list_tools()
    ]


class _RemoteCall:
    """The function of an MCP tool: validated keyword arguments in, the server's outcome out."""

    def __init__(self, connection: McpConnection, name: str) -> None:
        self.connection, self.name = connection, name

    def __call__(self, **arguments: Any) -> Outcome:
        return self.connection.call_tool(self.name, arguments)


async def _hold(client: Client, ready: _Ready) -> None:
    """Enter the client, hand it over, and keep it open until told to stop."""
    try:
        async with client:
            stop = asyncio.Event()
            ready.set_result((client, stop))
            await stop.wait()
    except BaseException as exc:
        if ready.done():
            raise
        ready.set_exception(exc)


async def _list_all(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _shut(
    loop: asyncio.AbstractEventLoop,
    thread: threading.Thread,
    ready: _Ready,
    held: concurrent.futures.Future[None],
    timeout: float,
) -> None:
    """Leave the client (the stdio server exits), then stop the loop and its thread."""
    if ready.done() and ready.exception() is None:
        loop.call_soon_threadsafe(ready.result()[1].set)
    else:
        held.cancel()
    try:
        held.result(timeout)
    except BaseException:  # a session that died or was cancelled is closed all the same
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout)
    if not loop.is_running():
        loop.close()


def _outcome(name: str, result: mcp_types.CallToolResult) -> Outcome:
    text = "\n".join(_text(block) for block in result.content).strip()
    data = result.structured_content
    if result.is_error:
        return Outcome(ok=False, message=f"{name} failed: {text or 'the server reported an error'}")
    if not text and data is not None:
        text = json.dumps(data, default=str)
    return Outcome(ok=True, message=text or "Done.", data=data)


def _text(block: Any) -> str:
    text = getattr(block, "text", None)
    return text if isinstance(text, str) else f"[{getattr(block, 'type', 'non-text')} content]"


def _reason(exc: BaseException) -> str:
    """The innermost cause of a startup failure, in one line (task groups wrap it)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "no answer within the timeout"
    return one_line(exc, limit=None)

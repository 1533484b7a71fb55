"""A small real MCP server over stdio, started by tests/test_tools_mcp.py as a subprocess.

Written with the SDK's FastMCP, called ``MCPServer`` since mcp 2. Its tools cover what a
toolbox must carry through: a dotted name, nested object/array arguments (pydantic models, so
the schema has ``$defs`` and ``$ref``s), an error the server reports, and state kept between
calls of one session. ``python mcp_server.py`` serves stdio; ``--http PORT`` serves
Streamable HTTP on ``http://127.0.0.1:PORT/mcp``.
"""

from __future__ import annotations

import math
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("freyr-test", log_level="WARNING")
_counter = {"value": 0}


class Address(BaseModel):
    """Where an order goes."""

    city: str = Field(description="city name")
    zip: str = Field(description="postal code")


class Item(BaseModel):
    """One line of an order."""

    sku: str = Field(description="product code")
    qty: int = Field(ge=1, description="how many")


@server.tool(name="math.hypot")
def hypot(a: float, b: float) -> float:
    """Length of the hypotenuse of a right triangle with legs a and b."""
    return math.hypot(a, b)


@server.tool(name="create-order")
def create_order(items: list[Item], address: Address, gift: bool = False) -> str:
    """Create an order of items shipped to an address."""
    lines = ", ".join(f"{item.qty}x {item.sku}" for item in items)
    wrap = " (gift)" if gift else ""
    return f"order for {address.city} {address.zip}: {lines}{wrap}"


@server.tool()
def refuse(reason: str) -> str:
    """Always fail with the given reason."""
    raise ToolError(f"refused: {reason}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek() -> int:
    """How many calls of ``count`` this session has made, changing nothing."""
    return _counter["value"]


@server.tool()
def count() -> int:
    """Count the calls of this tool in this session."""
    _counter["value"] += 1
    return _counter["value"]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

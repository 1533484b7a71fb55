"""``Toolbox.from_mcp`` against a real stdio MCP server (tests/mcp_server.py, a subprocess)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.testing import free_port, stopped_at_exit
from freyr_dspy.tools import McpConnection, Toolbox
from freyr_dspy.tools._mcp import server_parameters
from tests.support.paths import SUPPORT_DIR

pytestmark = pytest.mark.server

SERVER = [sys.executable, str(SUPPORT_DIR / "mcp_server.py")]
ORDER = {
    "items": [{"sku": "A1", "qty": "2"}, {"SKU": "B2", "qty": 1}],
    "address": {"city": "Oslo", "zip": 150},
}


@pytest.fixture(scope="module")
def box() -> Iterator[Toolbox]:
    """One server for the module: starting one costs about a second (the SDK's import)."""
    with Toolbox.from_mcp(SERVER, library="remote", timeout=20) as toolbox:
        yield toolbox


def test_the_servers_tools_are_listed_with_names_and_schemas_kept(box: Toolbox) -> None:
    assert box.names == ["math.hypot", "create-order", "refuse", "peek", "count"]
    assert box.libraries == {"remote": box.names}
    order = box.get("create-order")
    assert order.description == "Create an order of items shipped to an address."
    schema = order.json_schema()
    assert schema["properties"]["items"]["items"] == {"$ref": "#/$defs/Item"}
    assert schema["$defs"]["Item"]["properties"]["qty"]["minimum"] == 1
    full = box.catalog("full")
    assert "- math.hypot: Length of the hypotenuse" in full
    assert "    - items (array of {sku: string, qty: integer}, required)" in full
    assert "    - address ({city: string, zip: string}, required): Where an order goes." in full


def test_a_tool_the_server_marks_read_only_is_read_only(box: Toolbox) -> None:
    assert [tool.name for tool in box if tool.read_only] == ["peek"]


def test_calls_run_on_the_server_with_coerced_nested_arguments(box: Toolbox) -> None:
    hypot = box.execute("math.hypot", {"a": "3", "b": 4}).outcome
    assert (hypot.ok, hypot.message, hypot.data) == (True, "5.0", {"result": 5.0})
    order = box.execute("create-order", ORDER)
    assert order.outcome.ok
    assert order.outcome.message == "order for Oslo 150: 2x A1, 1x B2"
    assert order.arguments["items"][1] == {"sku": "B2", "qty": 1}


def test_one_session_lives_as_long_as_the_toolbox(box: Toolbox) -> None:
    first = int(box.execute("count", {}).outcome.message)
    assert int(box.execute("count", {}).outcome.message) == first + 1


def test_bad_arguments_never_reach_the_server(box: Toolbox) -> None:
    outcome = box.execute(
        "create-order", {"items": [{"sku": "A1", "qty": 0}, {"qty": "x"}], "address": {}}
    ).outcome
    assert not outcome.ok
    for clause in (
        "argument 'items[0].qty' is invalid: 0 is less than the minimum of 1",
        "argument 'items[1].qty' expects integer (how many), got 'x'",
        "missing required argument 'items[1].sku': string (product code)",
        "missing required argument 'address.city': string (city name)",
    ):
        assert clause in outcome.message
    unknown = box.execute("math.hypo", {}).outcome
    assert not unknown.ok and "Did you mean 'math.hypot'" in unknown.message


def test_an_error_the_server_reports_is_a_failed_outcome(box: Toolbox) -> None:
    outcome = box.execute("refuse", {"reason": "closed"}).outcome
    assert not outcome.ok
    assert outcome.message == "refuse failed: Error executing tool refuse: refused: closed"


def test_a_shared_connection_stays_open_and_closed_ones_fail_cleanly() -> None:
    with McpConnection(SERVER, timeout=20) as connection:
        first = Toolbox.from_mcp(connection)
        first.close()  # not its connection: nothing closed
        second = Toolbox.from_mcp(connection)
        assert second.execute("math.hypot", {"a": 6, "b": 8}).outcome.message == "10.0"
    closed = second.execute("math.hypot", {"a": 6, "b": 8}).outcome
    assert not closed.ok and "is not open; call open() first" in closed.message


def test_a_server_that_cannot_start_is_a_one_line_config_error() -> None:
    with pytest.raises(
        ConfigError, match=r"MCP server .* did not start: Connection closed"
    ) as info:
        Toolbox.from_mcp([sys.executable, "-c", "import sys; sys.exit(3)"], timeout=10)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ([], "MCP server: the command is empty"),
        ("", "MCP server: the command is empty"),
        (42, "MCP server: expected a command .* got int"),
        (["python", 3], "MCP server: expected a command .* got list"),
    ],
)
def test_bad_server_values_are_config_errors(server: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Toolbox.from_mcp(server)  # type: ignore[arg-type]


def test_servers_are_named_by_command_line_or_url() -> None:
    parameters = server_parameters("python -m my_server --port 'a b'")
    assert not isinstance(parameters, str)
    assert (parameters.command, parameters.args) == ("python", ["-m", "my_server", "--port", "a b"])
    assert server_parameters("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"
    assert McpConnection(["python", "a b.py"]).label == "python 'a b.py'"


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def http_url() -> Iterator[str]:
    """The test server on Streamable HTTP, on a free loopback port."""
    port = free_port()
    process = subprocess.Popen([*SERVER, "--http", str(port)], stderr=subprocess.DEVNULL)
    with stopped_at_exit(process):
        deadline = time.monotonic() + 15
        while not listening(port):
            assert process.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"


def test_a_streamable_http_server_by_url(http_url: str) -> None:
    with Toolbox.from_mcp(http_url, timeout=20) as box:
        assert box.names == ["math.hypot", "create-order", "refuse", "peek", "count"]
        order = box.execute("create-order", ORDER).outcome
        assert order.message == "order for Oslo 150: 2x A1, 1x B2"

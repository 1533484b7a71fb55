"""What a role contract becomes on the wire: litellm's requests to a stub server on 127.0.0.1.

Ollama gets the schema as ``format`` (litellm's ollama_chat transformation of a ``json_schema``
response format), OpenAI as ``response_format`` with ``strict`` where strict mode takes the
schema, and an OpenAI-compatible server DSPy knows no structured output for gets plain JSON mode
with the schema written into the prompt.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import dspy
import pytest

from freyr_dspy.backends import make_lm
from freyr_dspy.prompting._adapters import FreyrJSONAdapter
from freyr_dspy.roles import IntentClassifier, ParameterFiller, intent_contract, parameters_contract
from freyr_dspy.tools import Tool

pytestmark = pytest.mark.server

CONTRACT = intent_contract(["math.hypot", "get-weather"], 8)
SCHEMA = {
    "type": "object",
    "properties": {"intents": CONTRACT["intents"]},
    "required": ["intents"],
    "additionalProperties": False,
}
INPUTS = {"conversation": "(none)", "message": "hi", "tools": "- math.hypot", "state": "{}"}
ANSWER = '{"intents": ["math.hypot"]}'


class _Handler(BaseHTTPRequestHandler):
    """Records each JSON body; answers in Ollama's or OpenAI's shape, by path."""

    bodies: list[tuple[str, dict[str, Any]]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        self.bodies.append((self.path, body))
        if self.path.endswith("/api/chat"):
            reply: dict[str, Any] = {
                "model": body.get("model", "m"),
                "created_at": "2025-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": ANSWER},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 10,
                "eval_count": 5,
            }
        elif self.path.endswith("/api/show"):
            reply = {"model_info": {}, "template": "", "capabilities": ["completion"]}
        else:
            reply = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": ANSWER},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def server() -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A stub HTTP server; yields its base URL and the bodies it received."""
    bodies: list[tuple[str, dict[str, Any]]] = []
    handler = type("Handler", (_Handler,), {"bodies": bodies})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()


def call_intent(lm: dspy.LM) -> dspy.Prediction:
    role = IntentClassifier()
    role.set_lm(lm)
    with dspy.context(adapter=FreyrJSONAdapter()):
        return role(contract=CONTRACT, **INPUTS)


def chat_body(bodies: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    [body] = [b for path, b in bodies if path.endswith(("/api/chat", "/chat/completions"))]
    return body


def test_ollama_gets_the_schema_as_format(server: Any) -> None:
    base, bodies = server
    prediction = call_intent(make_lm("ollama_chat/qwen2.5:7b", api_base=base))
    body = chat_body(bodies)
    assert body["format"] == SCHEMA
    assert "Constraints:" not in body["messages"][0]["content"]
    assert prediction.intents == ["math.hypot"] and prediction.parsed_ok


def test_ollama_gets_a_tool_schema_as_it_is(server: Any) -> None:
    base, bodies = server
    tool = Tool.from_json_schema(
        "get-weather",
        "Weather.",
        {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
            "required": ["city"],
        },
    )
    role = ParameterFiller()
    role.set_lm(make_lm("ollama_chat/qwen2.5:7b", api_base=base))
    inputs = {"conversation": "", "message": "", "state": "", "tool": "", "feedback": "none"}
    with dspy.context(adapter=FreyrJSONAdapter()):
        role(contract=parameters_contract(tool), **inputs)
    assert chat_body(bodies)["format"]["properties"]["arguments"] == tool.json_schema()


def test_openai_gets_a_strict_json_schema_response_format(server: Any) -> None:
    base, bodies = server
    prediction = call_intent(make_lm("openai/gpt-4o-mini", api_base=base))
    fmt = chat_body(bodies)["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == SCHEMA and fmt["json_schema"]["strict"] is True
    assert prediction.intents == ["math.hypot"]


def test_a_server_without_structured_output_reads_the_schema_in_the_prompt(server: Any) -> None:
    base, bodies = server
    prediction = call_intent(make_lm("hosted_vllm/local", api_base=f"{base}/v1"))
    body = chat_body(bodies)
    assert body["response_format"] == {"type": "json_object"}
    stated = f"Constraints: must adhere to the JSON schema: {json.dumps(CONTRACT['intents'])}"
    assert stated in body["messages"][0]["content"]
    assert prediction.intents == ["math.hypot"]

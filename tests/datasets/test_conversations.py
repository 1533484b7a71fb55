"""Conversations that act on state: live apps as tools, turns seeing the earlier ones, checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.datasets import (
    ConversationBenchmark,
    apps_from_module,
    is_conversation_file,
    read_conversations,
)
from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import FreyrProgram, Session
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Toolbox

APPS_FILE = Path(__file__).resolve().parents[2] / "trainsets" / "conversations" / "apps.py"
APPS = apps_from_module(f"{APPS_FILE}:APPS")
CATALOGUE = [
    {"sku": "SKU-1", "name": "oat milk", "price": 2.5},
    {"sku": "SKU-2", "name": "rye bread", "price": 3.0},
]
CART = {
    "catalogue": CATALOGUE,
    "lines": [{"sku": "SKU-1", "name": "oat milk", "price": 2.5, "quantity": 2}],
    "coupons": {"SAVE10": 10},
    "addresses": {"home": "1 Main St"},
}
CONVERSATION = {
    "id": "cart-1", "toolbox": "cart", "state": CART,
    "turns": [
        {"message": "What's in my cart?", "calls": [{"name": "view_cart", "arguments": {}}]},
        {"message": "Add a rye bread and apply SAVE10", "calls": [
            {"name": "add_item", "arguments": {"sku": "SKU-2"}},
            {"name": "apply_coupon", "arguments": {"code": "SAVE10"}}]},
        {"message": "Check out to home", "calls": [
            {"name": "checkout", "arguments": {"address": "home"}}]},
    ],
}  # fmt: skip


def write(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_an_apps_methods_are_tools_that_act_on_it_and_undo_a_failure() -> None:
    cart = APPS["cart"](**json.loads(json.dumps(CART)))
    box = Toolbox.from_object(cart)
    assert "snapshot" not in box.names and "view_cart" in box.names
    assert box.execute("add_item", {"sku": "SKU-2", "quantity": "2"}).outcome.ok  # coerced
    assert cart.lines[-1]["quantity"] == 2
    before = cart.snapshot()
    failed = box.execute("checkout", {"address": "office"}).outcome
    assert not failed.ok and "no saved address office" in failed.message
    assert cart.snapshot() == before  # a failed call changes nothing


def test_a_conversation_file_is_read_and_its_end_state_replayed_from_the_calls(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "c.jsonl", CONVERSATION)
    assert is_conversation_file(path)
    [row] = read_conversations(path, APPS)
    assert row.end_state is not None
    assert row.end_state["orders"][0]["total"] == pytest.approx((5.0 + 3.0) * 0.9)
    assert row.end_state["lines"] == []
    bad = {**CONVERSATION, "turns": [{"message": "x", "calls": [
        {"name": "apply_coupon", "arguments": {"code": "NOPE"}}]}]}  # fmt: skip
    with pytest.raises(DataError, match=r"c\.jsonl:1: turn 1: apply_coupon: .*NOPE is not valid"):
        read_conversations(write(tmp_path / "c.jsonl", bad), APPS)
    with pytest.raises(DataError, match="toolbox 'shop' is none of notes, cart"):
        read_conversations(write(tmp_path / "c.jsonl", {**CONVERSATION, "toolbox": "shop"}), APPS)
    with pytest.raises(ConfigError, match="a mapping of app names to classes"):
        apps_from_module(f"{APPS_FILE}:Cart")


def _scripted(turns: dict[str, dict[str, Any]]) -> tuple[FreyrProgram, FunctionLM]:
    """A program whose roles answer per user message; the conversation is recorded."""

    def answer(call: FakeCall) -> Any:
        script = turns[call.inputs.get("message", "")]
        if call.role == "parameters":
            tool = call.inputs["tool"].split(":", 1)[0].lstrip("- ")
            return {"arguments": script["arguments"][tool]}
        if call.role == "intent":
            return {"intents": script["intents"]}
        return {"reply": script.get("reply", "Done.")}

    engine = FunctionLM(answer)
    toolbox = Toolbox.from_object(APPS["cart"](**CART)).spec_only()
    program = FreyrProgram(toolbox=toolbox, strategy=make_strategy("freyr", confirm=False))
    program.set_lm(dspy.LM("fake/conversation", engine=engine, cache=False))
    return program, engine


RIGHT = {
    "What's in my cart?": {"intents": ["view_cart"], "arguments": {"view_cart": {}},
                           "reply": "2 oat milk."},
    # SKU-2 is stated nowhere before: the program looks it up (the listing, then the search,
    # whose query the model writes) and writes add_item again with the results in view
    "Add a rye bread and apply SAVE10": {
        "intents": ["add_item", "apply_coupon"],
        "arguments": {"add_item": {"sku": "SKU-2"}, "apply_coupon": {"code": "SAVE10"},
                      "search_products": {"query": "rye bread"}}},
    "Check out to home": {"intents": ["checkout"], "arguments": {"checkout": {"address": "home"}}},
}  # fmt: skip


def test_a_conversation_runs_on_one_live_app_each_turn_seeing_the_earlier_ones(
    tmp_path: Path,
) -> None:
    bench = ConversationBenchmark(
        APPS, read_conversations(write(tmp_path / "c.jsonl", CONVERSATION), APPS)
    )
    program, engine = _scripted(RIGHT)
    [episode] = bench.episodes(EvalOptions(data_dir=tmp_path))
    records = run_episode(bench, program, episode)
    assert [r.success for r in records] == [1.0, 1.0, 1.0]
    # the last turn was planned with the earlier turns' calls and results in view
    last = [c for c in engine.calls if c.role == "intent"][-1].inputs["conversation"]
    assert "user: What's in my cart?" in last and "tool: view_cart() returned" in last
    assert "tool: apply_coupon(code='SAVE10') returned SAVE10: 10 % off" in last
    assert "tool: search_products(query='rye bread') returned" in last
    # a wrong turn fails it, and the end state fails the conversation's last turn
    wrong = {**RIGHT, "Add a rye bread and apply SAVE10": {
        "intents": ["add_item"], "arguments": {"add_item": {"sku": "SKU-2"}}}}  # fmt: skip
    program, _ = _scripted(wrong)
    records = run_episode(bench, program, episode)
    assert [r.success for r in records] == [1.0, 0.0, 0.0]
    assert records[2].failure_kind == "state"


def test_reading_calls_beyond_the_expected_ones_are_free(tmp_path: Path) -> None:
    bench = ConversationBenchmark(
        APPS, read_conversations(write(tmp_path / "c.jsonl", CONVERSATION), APPS)
    )
    looks_again = {**RIGHT, "Check out to home": {
        "intents": ["view_cart", "checkout"],
        "arguments": {"view_cart": {}, "checkout": {"address": "home"}}}}  # fmt: skip
    program, _ = _scripted(looks_again)
    [episode] = bench.episodes(EvalOptions(data_dir=tmp_path))
    assert [r.success for r in run_episode(bench, program, episode)] == [1.0, 1.0, 1.0]


def test_each_turn_alone_is_a_training_row_with_the_expected_turns_before_it(
    tmp_path: Path,
) -> None:
    bench = ConversationBenchmark(
        APPS, read_conversations(write(tmp_path / "c.jsonl", CONVERSATION), APPS)
    )
    turns = bench.train_episodes(tmp_path, EvalOptions(data_dir=tmp_path))
    assert [e.id for e in turns] == ["cart-1/1", "cart-1/2", "cart-1/3"]
    third = turns[2].steps[0]
    assert "user: Add a rye bread and apply SAVE10" in third.conversation
    assert "tool: add_item(sku='SKU-2') returned added 1 x rye bread" in third.conversation
    program, _ = _scripted(RIGHT)
    # the app is in the state the expected turns left: checking out orders both items
    [record] = run_episode(bench, program, turns[2])
    assert record.success == 1.0


def test_a_session_keeps_the_turns_and_acts_on_the_live_app() -> None:
    program, _ = _scripted(RIGHT)
    cart = APPS["cart"](**json.loads(json.dumps(CART)))
    chat = Session(program, toolbox=Toolbox.from_object(cart))
    for message in RIGHT:
        chat.send(message)
    assert cart.orders and cart.orders[0]["total"] == pytest.approx(7.2)
    assert [t["role"] for t in chat.turns[:3]] == ["user", "tool", "assistant"]
    assert chat.turns[2]["content"] == "2 oat milk."

"""FREYR's precision on fakes: several calls of one tool, abstaining, and calls-only runs."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles import several_calls_contract
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._freyr import freed_slots
from freyr_dspy.strategies._gated import Gated
from freyr_dspy.strategies._grounding import lists_values
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str, unit: str = "celsius") -> str:
    """Current weather in a city.

    Args:
        city: the city.
        unit: celsius or fahrenheit.
    """
    return f"sunny in {city}"


def area(base: float, height: float) -> float:
    """Area of a triangle from its base and height."""
    return base * height / 2


BOX = Toolbox([Tool.from_function(weather), Tool.from_function(area)])


def program(
    answers: dict[str, Any], strategy: str = "freyr", **settings: Any
) -> tuple[FreyrProgram, FunctionLM]:
    """A plain tool-use program whose roles are answered by ``answers[role]``."""

    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=BOX, strategy=make_strategy(strategy, **settings))
    prog.set_lm(dspy.LM("fake/precision", engine=engine, cache=False))
    return prog, engine


def test_the_calls_of_a_repeated_tool_are_written_together_each_with_its_values() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["weather", "weather"]},
            "parameters": {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Paris"}]}},
            "summary": {"reply": "done"},
        }
    )
    result = prog(message="weather in Oslo and in Paris").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("weather", {"city": "Oslo"}),
        ("weather", {"city": "Paris"}),
    ]
    [filled] = [c for c in engine.calls if c.role == "parameters"]
    assert "at most 2" in filled.inputs["tool"]


def test_a_call_written_twice_is_made_once_and_no_more_than_planned() -> None:
    prog, _ = program(
        {
            "intent": {"intents": ["weather", "weather"]},
            "parameters": {
                "arguments": {"calls": [{"city": "Oslo"}, {"city": "Oslo"}, {"city": "Rome"}]}
            },
            "summary": {"reply": "done"},
        }
    )
    result = prog(message="weather in Oslo, and in Rome").result
    # Oslo once; Rome is the second distinct call, and two were planned
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {"city": "Rome"}]


def test_one_of_several_calls_that_fails_is_retried_with_its_own_arguments_shown() -> None:
    def parameters(call: FakeCall) -> dict[str, Any]:
        if call.inputs["feedback"] == "none":
            return {"arguments": {"calls": [{"city": "Oslo"}, {"town": "Paris"}]}}
        return {"arguments": {"city": "Paris"}}

    prog, engine = program(
        {
            "intent": {"intents": ["weather", "weather"]},
            "parameters": parameters,
            "summary": {"reply": "done"},
        }
    )
    result = prog(message="weather in Oslo and Paris").result
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {"city": "Paris"}]
    retry = [c for c in engine.calls if c.role == "parameters"][1]
    assert "'town': 'Paris'" in retry.inputs["feedback"]


def test_several_calls_are_typed_as_a_list_of_the_tools_arguments() -> None:
    schema = several_calls_contract(BOX.get("weather"), 3)["arguments"]
    calls = schema["properties"]["calls"]
    assert (calls["minItems"], calls["maxItems"]) == (1, 3)
    assert calls["items"]["required"] == ["city"]
    assert schema["additionalProperties"] is False


def test_abstain_checks_a_one_tool_plan_and_a_rejected_one_is_answered_in_words() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["area"]},
            "confirm": {"asked": {"area": False}},
            "chat": {"reply": "I have no tool for currency conversion."},
        },
        abstain=True,
    )
    result = prog(message="turn 85 dollars into euros").result
    assert (result.calls, result.reply) == ([], "I have no tool for currency conversion.")
    assert engine.roles_called() == ["intent", "confirm", "chat"]
    [check] = [c for c in engine.calls if c.role == "confirm"]
    assert "area" in check.inputs["tools"] and "weather" not in check.inputs["tools"]


def test_abstain_keeps_a_one_tool_plan_the_check_accepts() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["area"]},
            "confirm": {"asked": {"area": True}},
            "parameters": {"arguments": {"base": 10, "height": 5}},
            "summary": {"reply": "25"},
        },
        abstain=True,
    )
    result = prog(message="triangle with base 10 and height 5").result
    assert [c.tool for c in result.calls] == ["area"]
    assert engine.roles_called() == ["intent", "confirm", "parameters", "summary"]


def test_without_abstain_a_one_tool_plan_is_not_checked() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["area"]},
            "parameters": {"arguments": {"base": 10, "height": 5}},
            "summary": {"reply": "25"},
        }
    )
    prog(message="triangle with base 10 and height 5")
    assert "confirm" not in engine.roles_called()


def test_abstain_needs_the_confirm_role() -> None:
    with pytest.raises(ConfigError, match="abstain checks plans with the confirm role"):
        make_strategy("freyr", abstain=True, confirm=False)


@pytest.mark.parametrize("strategy", ["freyr", "nlt"])
def test_calls_only_stops_at_the_calls_without_a_summary(strategy: str) -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["area"]},
            "tool_selection": {"thinking": "", "assessment": "area -- YES\nweather -- NO"},
            "parameters": {"arguments": {"base": 10, "height": 5}},
            "summary": {"reply": "25"},
        },
        strategy=strategy,
    )
    result = prog(message="triangle with base 10 and height 5", calls_only=True).result
    assert [c.tool for c in result.calls] == ["area"] and result.reply == ""
    assert "summary" not in engine.roles_called()
    made = len(engine.calls)
    prog(message="triangle with base 10 and height 5")  # the same request, with its reply
    assert [c.role for c in engine.calls[made:]][-1] == "summary"


def test_calls_only_still_replies_when_no_tool_is_needed() -> None:
    prog, engine = program(
        {"intent": {"intents": ["conversation"]}, "chat": {"reply": "Hello!"}},
    )
    result = prog(message="hi", calls_only=True).result
    assert (result.calls, result.reply) == ([], "Hello!")
    assert engine.roles_called() == ["intent", "chat"]


def test_require_stated_makes_no_call_with_an_invented_required_value_and_chats() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"city": "Atlantis"}},
            "chat": {"reply": "Which city?"},
        },
        require_stated=True,
    )
    result = prog(message="what's the weather like?").result
    assert (result.reply, [c.outcome.ok for c in result.calls]) == ("Which city?", [False])
    assert result.calls[0].outcome.message == "not made: the request gives no city"
    assert engine.roles_called() == ["intent", "parameters", "chat"]


def test_require_stated_makes_a_call_whose_values_the_request_gives() -> None:
    prog, _ = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"city": "Oslo"}},
            "summary": {"reply": "sunny"},
        },
        require_stated=True,
    )
    result = prog(message="what's the weather like in Oslo?").result
    assert [(c.tool, c.outcome.ok) for c in result.calls] == [("weather", True)]


def test_split_calls_lets_a_tool_named_once_be_called_for_each_thing_asked() -> None:
    prog, engine = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Paris"}]}},
            "summary": {"reply": "done"},
        },
        split_calls=True,
    )
    result = prog(message="weather in Oslo and in Paris").result
    assert [c.arguments["city"] for c in result.calls] == ["Oslo", "Paris"]
    [filled] = [c for c in engine.calls if c.role == "parameters"]
    assert "at most 4" in filled.inputs["tool"]


def test_split_calls_keeps_only_the_extra_calls_whose_differences_the_request_states() -> None:
    prog, _ = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {
                "arguments": {
                    "calls": [
                        {"city": "Oslo"},
                        {"city": "Oslo", "unit": "fahrenheit"},  # nobody said fahrenheit
                        {"city": "Bergen"},  # nor Bergen
                        {"city": "Paris"},
                    ]
                }
            },
            "summary": {"reply": "done"},
        },
        split_calls=True,
    )
    result = prog(message="weather in Oslo and in Paris").result
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {"city": "Paris"}]
    one, _ = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Rome"}]}},
            "summary": {"reply": "done"},
        },
        split_calls=True,
    )
    assert [c.arguments for c in one(message="weather in Oslo").result.calls] == [{"city": "Oslo"}]


def test_split_listed_splits_only_a_request_that_lists_values() -> None:
    listed, engine = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Paris"}]}},
            "summary": {"reply": "done"},
        },
        split_listed=True,
    )
    result = listed(message="weather in Oslo and in Paris").result
    assert [c.arguments["city"] for c in result.calls] == ["Oslo", "Paris"]
    alone, engine = program(
        {
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"city": "Oslo"}},
            "summary": {"reply": "done"},
        },
        split_listed=True,
    )
    assert [c.arguments for c in alone(message="weather in Oslo").result.calls] == [
        {"city": "Oslo"}
    ]
    [filled] = [c for c in engine.calls if c.role == "parameters"]
    assert "at most 4" not in filled.inputs["tool"]  # one call's prompt and answer


@pytest.mark.parametrize(
    ("message", "listed"),
    [
        ("weather in Oslo and in Paris", True),
        ("convert 10, 20 and 30 USD", True),
        ("el tiempo en Madrid y Lisboa", True),
        ("das Wetter in Berlin und Wien", True),
        ("the weather in each of my cities", True),
        ("what is the weather in Oslo?", False),
        ("book a table for two at 8pm", False),
    ],
)
def test_a_request_that_may_list_values_is_told_apart(message: str, listed: bool) -> None:
    assert lists_values(message) is listed


def test_calls_the_plan_names_are_kept_without_the_split_guard() -> None:
    prog, _ = program(
        {
            "intent": {"intents": ["weather", "weather"]},
            "parameters": {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Rome"}]}},
            "summary": {"reply": "done"},
        },
        rounds=1,  # one plan: Rome, stated nowhere, would otherwise wait for a result
    )
    result = prog(message="weather in Oslo and somewhere warm").result
    assert [c.arguments["city"] for c in result.calls] == ["Oslo", "Rome"]


def test_require_stated_lets_a_copied_example_be_written_again_before_judging() -> None:
    def city(name: str) -> str:
        """Weather in a city.

        Args:
            name: the city, e.g. 'Lisbon'.
        """
        return f"sunny in {name}"

    answers = iter([{"arguments": {"name": "Lisbon"}}, {"arguments": {"name": "Oslo"}}])

    def parameters(call: FakeCall) -> dict[str, Any]:
        return next(answers)

    engine = FunctionLM(
        lambda call: (
            {"intent": {"intents": ["city"]}, "summary": {"reply": "ok"}}.get(call.role)
            or parameters(call)
        )
    )
    prog = FreyrProgram(
        toolbox=Toolbox([Tool.from_function(city)]),
        strategy=make_strategy("freyr", require_stated=True),
    )
    prog.set_lm(dspy.LM("fake/precision-copy", engine=engine, cache=False))
    result = prog(message="is it sunny in Oslo?").result
    assert [(c.arguments, c.outcome.ok) for c in result.calls] == [({"name": "Oslo"}, True)]


def test_a_call_refused_as_a_copied_example_then_as_unstated_is_answered_by_chat() -> None:
    def city(name: str) -> str:
        """Weather in a city.

        Args:
            name: the city, e.g. 'Lisbon'.
        """
        return f"sunny in {name}"

    answers = iter([{"arguments": {"name": "Lisbon"}}, {"arguments": {"name": "Atlantis"}}])
    replies = {"intent": {"intents": ["city"]}, "chat": {"reply": "Which city?"}}
    engine = FunctionLM(lambda call: replies.get(call.role) or next(answers))
    prog = FreyrProgram(
        toolbox=Toolbox([Tool.from_function(city)]),
        strategy=make_strategy("freyr", require_stated=True),
    )
    prog.set_lm(dspy.LM("fake/precision-copy-unstated", engine=engine, cache=False))
    result = prog(message="is it sunny?").result
    [call] = result.calls
    assert (call.never_made, call.attempts, result.reply) == (True, 1, "Which city?")
    assert engine.roles_called() == ["intent", "parameters", "parameters", "chat"]


def test_a_replanned_request_inside_a_gate_that_writes_no_reply_writes_none() -> None:
    def broken(city: str) -> str:
        """Weather in a city.

        Args:
            city: the city.
        """
        raise ValueError("the weather service is down")

    engine = FunctionLM(
        lambda call: {
            "intent": {"intents": ["broken"] if call.inputs["conversation"] == "(none)" else []},
            "parameters": {"arguments": {"city": "Oslo"}},
        }.get(call.role)
    )
    prog = FreyrProgram(
        toolbox=Toolbox([Tool.from_function(broken), Tool.from_function(area)]),
        strategy=Gated(inner=make_strategy("freyr", confirm=False, replan=True), respond=False),
        max_retries=0,
    )
    prog.set_lm(dspy.LM("fake/precision-replan", engine=engine, cache=False))
    result = prog(message="weather in Oslo?").result
    assert (result.reply, result.calls[0].exhausted) == ("", True)
    assert engine.roles_called() == ["intent", "parameters", "intent"]  # no summary
    assert result.failure is not None and result.failure.kind == "retries"


def mail_box() -> Toolbox:
    """Two related mail tools: replying to a message, searching the inbox."""

    def reply_email(message_id: str, body: str) -> str:
        """Reply to one email.

        Args:
            message_id: the email's id.
            body: the reply's text.
        """
        return f"replied to {message_id}"

    def search_inbox(query: str) -> str:
        """Search the inbox.

        Args:
            query: words to look for.
        """
        return f"found mail about {query}"

    return Toolbox([Tool.from_function(reply_email), Tool.from_function(search_inbox)])


def mail_program(answers: dict[str, Any], **settings: Any) -> tuple[FreyrProgram, FunctionLM]:
    """``program`` over the mail tools: a plan of a reply and a search the check rejects."""

    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=mail_box(), strategy=make_strategy("freyr", **settings))
    prog.set_lm(dspy.LM("fake/refill", engine=engine, cache=False))
    return prog, engine


TWO_REPLIES = "Reply 'Approved' to msg-1001 and 'Rejected' to msg-1002."
REPLY_THEN_SEARCH = {
    "intent": {"intents": ["reply_email", "search_inbox"]},
    "confirm": {"asked": {"reply_email": True, "search_inbox": False}},
    "summary": {"reply": "done"},
}


def test_refill_turns_an_entry_the_check_dropped_into_a_call_of_the_tool_before_it() -> None:
    first = {"message_id": "msg-1001", "body": "Approved"}
    second = {"message_id": "msg-1002", "body": "Rejected"}

    def parameters(call: FakeCall) -> dict[str, Any]:
        several = "at most 2" in call.inputs["tool"]
        return {"arguments": {"calls": [first, second]} if several else first}

    answers = {**REPLY_THEN_SEARCH, "parameters": parameters}
    plain, _ = mail_program(answers)
    assert [c.arguments for c in plain(message=TWO_REPLIES).result.calls] == [first]

    prog, engine = mail_program(answers, refill=True)
    result = prog(message=TWO_REPLIES).result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("reply_email", first),
        ("reply_email", second),
    ]
    assert result.intents == ["reply_email"]
    assert len([c for c in engine.calls if c.role == "parameters"]) == 1


def test_a_refilled_call_the_request_does_not_set_apart_is_not_made() -> None:
    # the second reply differs only in a body nobody wrote
    invented = {
        "calls": [
            {"message_id": "msg-1001", "body": "Approved"},
            {"message_id": "msg-1001", "body": "Thanks for your patience"},
        ]
    }
    prog, _ = mail_program(
        {**REPLY_THEN_SEARCH, "parameters": {"arguments": invented}}, refill=True
    )
    result = prog(message="Reply 'Approved' to msg-1001.").result
    assert [c.arguments for c in result.calls] == [{"message_id": "msg-1001", "body": "Approved"}]


def test_refill_gives_nothing_when_the_check_drops_the_whole_plan() -> None:
    prog, engine = mail_program(
        {
            "intent": {"intents": ["reply_email", "search_inbox"]},
            "confirm": {"asked": {"reply_email": False, "search_inbox": False}},
            "chat": {"reply": "I cannot do that."},
        },
        refill=True,
    )
    result = prog(message="Print my last email.").result
    assert (result.calls, result.reply) == ([], "I cannot do that.")
    assert "parameters" not in engine.roles_called()


@pytest.mark.parametrize(
    ("plan", "kept", "spare"),
    [
        (["a", "b"], ["a"], {"a": 1}),
        (["a", "b", "c"], ["a"], {"a": 2}),
        (["b", "a"], ["a"], {"a": 1}),  # nothing kept before: the tool after it
        (["a", "b", "c", "d"], ["a", "c"], {"a": 1, "c": 1}),
        (["a", "a"], ["a", "a"], {}),
        (["a", "b"], [], {}),
        (["conversation", "a"], ["conversation", "a"], {}),
    ],
)
def test_freed_slots_go_to_the_nearest_kept_tool_before(
    plan: list[str], kept: list[str], spare: dict[str, int]
) -> None:
    assert dict(freed_slots(plan, kept)) == spare


def test_refill_needs_confirm() -> None:
    with pytest.raises(ConfigError, match="refill"):
        make_strategy("freyr", confirm=False, refill=True)

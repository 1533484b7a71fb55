"""The NLT YES/NO parser on well-formed and malformed selector output."""

from __future__ import annotations

import dspy
import pytest

from freyr_dspy.roles._tool_selection import (
    Assessment,
    ToolSelector,
    assess,
    parse_assessment,
    render_selection_catalog,
)
from freyr_dspy.testing import ScriptedLM
from freyr_dspy.tools import Tool, Toolbox

NAMES = ["Website information", "Past Purchases", "Talk to a Human", "Available discounts"]


def parse(text: object) -> Assessment:
    return parse_assessment(text, NAMES)


def test_paper_format() -> None:
    text = """Thinking: the user asks where to buy tickets and about an order.

Website information -- YES

Past Purchases -- YES

Talk to a Human -- NO

Available discounts -- NO

Assessment finished."""
    result = parse(text)
    assert result.selected == ("Website information", "Past Purchases")
    assert result.rejected == ("Talk to a Human", "Available discounts")
    assert result.missing == () and result.unknown == () and result.finished


@pytest.mark.parametrize(
    "line",
    [
        "past purchases -- yes",
        "PAST PURCHASES: YES",
        "Past Purchases – YES",
        "Past Purchases — Yes.",
        "- Past Purchases -- YES",
        "* **Past Purchases**: YES (the order)",
        "2. Past Purchases -> yes",
        "Past Purchases YES",
        "`Past Purchases` = YES",
        "Past_Purchases -- YES",
    ],
)
def test_separators_case_bullets(line: str) -> None:
    result = parse(line)
    assert result.selected == ("Past Purchases",)
    assert result.unknown == ()


def test_missing_tools_count_as_no() -> None:
    result = parse("Talk to a Human -- YES")
    assert result.selected == ("Talk to a Human",)
    assert set(result.missing) == {"Website information", "Past Purchases", "Available discounts"}
    assert not result.finished


def test_unknown_names_are_ignored_and_reported() -> None:
    result = parse("Refund Robot -- YES\nPast Purchases -- YES\nThinking: no idea")
    assert result.selected == ("Past Purchases",)
    assert result.unknown == ("Refund Robot",)  # "Thinking" is a label, not a tool


def test_text_after_the_end_marker_is_ignored() -> None:
    text = (
        "Past Purchases -- NO\nAssessment finished.\nTalk to a Human -- YES\nPast Purchases -- YES"
    )
    result = parse(text)
    assert result.selected == ()
    assert result.rejected == ("Past Purchases",)
    assert result.finished


def test_first_verdict_wins_and_catalog_order_is_kept() -> None:
    result = parse("Talk to a Human -- YES\nWebsite information -- YES\nTalk to a Human -- NO")
    assert result.selected == ("Website information", "Talk to a Human")


def test_function_style_and_partial_names() -> None:
    result = parse("check_past_purchases -- YES\nTopic: Available discounts -- YES\nWebsite -- YES")
    assert result.selected == ("Website information", "Past Purchases", "Available discounts")


@pytest.mark.parametrize(
    "value",
    [
        {"Past Purchases": "YES", "Talk to a Human": "NO"},
        {"Past Purchases": True, "Talk to a Human": False},
        '{"Past Purchases": "yes", "Talk to a Human": "no"}',
        ["Past Purchases -- YES", "Talk to a Human -- NO"],
        "```\nPast Purchases -- YES\nTalk to a Human -- NO\n```",
    ],
)
def test_structured_shapes(value: object) -> None:
    result = parse(value)
    assert result.selected == ("Past Purchases",)
    assert result.rejected == ("Talk to a Human",)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        None,
        "I'm not sure how to check on it.",
        "[#]\n[#]\n[#]",
        "Tune Barn",
        "{response}",
        "YES",
        "-- NO",
    ],
)
def test_garbage_selects_nothing(garbage: object) -> None:
    result = parse(garbage)
    assert result.selected == ()
    assert result.missing == tuple(NAMES)


def test_prose_with_a_trailing_no_is_not_reported_as_a_tool() -> None:
    long_line = "I think that the customer really wants to know something else, so the answer is no"
    assert parse(long_line).unknown == ()


def test_assess_falls_back_to_the_thinking() -> None:
    prediction = dspy.Prediction(thinking="Past Purchases -- YES", assessment="no idea")
    assert assess(prediction, NAMES).selected == ("Past Purchases",)


def test_selection_catalog_keeps_whole_descriptions() -> None:
    box = Toolbox(
        [
            Tool(
                name="Website information",
                description="questions about the “Tune Barn” website: policies",
            )
        ]
    )
    assert render_selection_catalog(box) == (
        "- Website information: questions about the “Tune Barn” website: policies"
    )
    assert render_selection_catalog(box, "names") == "- Website information"


@pytest.mark.parametrize("adapter", [dspy.JSONAdapter(), dspy.ChatAdapter()])
def test_role_reads_raw_text_when_the_adapter_fails(adapter: dspy.Adapter) -> None:
    raw = (
        "Thinking: an order question.\nPast Purchases -- YES\nWebsite information: NO\n"
        "Assessment finished."
    )
    engine = ScriptedLM({"tool_selection": {"*": raw}})
    role = ToolSelector()
    role.set_lm(dspy.LM("fake/sel", engine=engine, cache=False))
    with dspy.context(adapter=adapter):
        prediction = role(conversation="(none)", message="my order?", tools="- Past Purchases")
    assert not prediction.parsed_ok
    assert prediction.thinking == "an order question."
    assert assess(prediction, NAMES).selected == ("Past Purchases",)


def test_use_instructions_replaces_only_the_instructions() -> None:
    role = ToolSelector()
    role.use_instructions("You are an assistant to Alex.")
    assert role.predict.signature.instructions == "You are an assistant to Alex."
    assert list(role.predict.signature.output_fields) == ["thinking", "assessment"]

"""Exact-call matching, the accuracy measure of ``scripts/bench_tools.py``."""

from __future__ import annotations

import pytest

from freyr_dspy.evaluation._calls import calls_match, values_equal
from freyr_dspy.tools import Toolbox

BOX = Toolbox.from_openai(
    [
        {
            "name": "send_payment",
            "description": "Pay someone.",
            "parameters": {
                "type": "object",
                "properties": {
                    "to": {"type": "string"},
                    "amount": {"type": "number"},
                    "currency": {"type": "string", "default": "EUR"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["to", "amount"],
            },
        },
        {"name": "math.hypot", "description": "Hypotenuse.", "parameters": {"type": "object"}},
    ]
)
PAY = {"name": "send_payment", "arguments": {"to": "Ana", "amount": 20}}


@pytest.mark.parametrize(
    ("expected", "got", "equal"),
    [
        ("Lisbon", " lisbon ", True),
        ("Lisbon", "Lisboa", False),
        ("The file is attached", "The file is attached.", True),
        (20, 20.0, True),
        (20, "20", True),
        (20, 21, False),
        (True, True, True),
        (True, "true", True),
        (True, 1, False),
        (["a", "b"], ["A", "b"], True),
        (["a", "b"], ["b", "a"], False),
        ({"name": "Ana", "email": "a@x.org"}, {"email": "a@x.org", "name": "ana"}, True),
        ({"name": "Ana"}, {"name": "Ana", "email": "a@x.org"}, False),
    ],
)
def test_values_compare_by_meaning_not_by_spelling(
    expected: object, got: object, equal: bool
) -> None:
    assert values_equal(expected, got) is equal


def test_the_same_call_matches() -> None:
    assert calls_match([PAY], [("send_payment", {"to": "ana", "amount": 20.0})], BOX)


def test_a_wrong_name_a_wrong_value_or_a_missing_argument_does_not() -> None:
    assert not calls_match([PAY], [("math.hypot", {"to": "Ana", "amount": 20})], BOX)
    assert not calls_match([PAY], [("send_payment", {"to": "Ana", "amount": 25})], BOX)
    assert not calls_match([PAY], [("send_payment", {"to": "Ana"})], BOX)


def test_an_extra_argument_is_accepted_only_at_its_declared_default() -> None:
    with_default = {"to": "Ana", "amount": 20, "currency": "EUR"}
    assert calls_match([PAY], [("send_payment", with_default)], BOX)
    assert not calls_match([PAY], [("send_payment", {**with_default, "currency": "USD"})], BOX)
    assert not calls_match([PAY], [("send_payment", {**with_default, "tags": ["rent"]})], BOX)
    assert calls_match([PAY], [("send_payment", {**with_default, "tags": []})], BOX)  # empty


def test_calls_must_come_in_the_expected_order_and_number() -> None:
    hypot = {"name": "math.hypot", "arguments": {}}
    made_in_order = [("send_payment", PAY["arguments"]), ("math.hypot", {})]
    assert calls_match([PAY, hypot], made_in_order, BOX)
    assert not calls_match([PAY, hypot], made_in_order[::-1], BOX)
    assert not calls_match([PAY], made_in_order, BOX)
    assert calls_match([], [], BOX)
    assert not calls_match([], [("math.hypot", {})], BOX)

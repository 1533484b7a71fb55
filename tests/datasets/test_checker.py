"""The exact-call check: names as a set, arguments normalised, feedback that says what differs."""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.datasets import ExpectedCall, check_calls
from freyr_dspy.tools import Tool, Toolbox


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ExpectedCall]:
    return [ExpectedCall(name=name, arguments=arguments) for name, arguments in specs]


def test_equal_after_normalisation_passes(box: Toolbox) -> None:
    want = calls(("get-weather", {"city": "Oslo", "days": 2, "unit": "celsius"}))
    check = check_calls(
        want, [("get-weather", {"city": " oslo ", "days": "2.0", "unit": "CELSIUS"})], box
    )
    assert check.ok and check.names_ok and check.kind is None and check.problems == ()


def test_parallel_calls_match_in_any_order_unless_ordered(box: Toolbox) -> None:
    want = calls(("get-weather", {"city": "Oslo"}), ("get-weather", {"city": "Paris"}))
    made = [("get-weather", {"city": "Paris"}), ("get-weather", {"city": "Oslo"})]
    assert check_calls(want, made, box).ok
    ordered = check_calls(want, made, box, ordered=True)
    assert not ordered.ok and ordered.kind == "arguments"
    assert "get-weather: city is 'Paris', expected 'Oslo'" in ordered.problems


def test_the_same_arguments_twice_are_not_two_asked_calls(box: Toolbox) -> None:
    want = calls(("get-weather", {"city": "Oslo"}), ("get-weather", {"city": "Paris"}))
    check = check_calls(want, [("get-weather", {"city": "Oslo"})] * 2, box)
    assert not check.ok and check.names_ok
    assert check.problems == ("get-weather: city is 'Oslo', expected 'Paris'",)


@pytest.mark.parametrize(
    ("made", "kind", "problem"),
    [
        ([], "missed-call", "did not call get-weather, e.g. with {city: 'Oslo'}"),
        ([("get-weather", {})], "arguments", "called get-weather without city"),
        (
            [("get-weather", {"city": "Oslo", "country": "NO"})],
            "arguments",
            "get-weather: unknown argument country",
        ),
        (
            [("get-weather", {"city": "Oslo", "days": 3})],
            "arguments",
            "get-weather: days=3 was not asked for",
        ),
        (
            [("get-weather", {"city": "Oslo"}), ("tag_photos", {"labels": ["x"], "album": "a"})],
            "extra-call",
            "called tag_photos, which the request did not ask for",
        ),
        (
            [("tag_photos", {"labels": ["x"], "album": "a"})],
            "wrong-tool",
            "did not call get-weather",
        ),
    ],
)
def test_each_difference_has_its_kind_and_sentence(
    box: Toolbox, made: list[Any], kind: str, problem: str
) -> None:
    check = check_calls(calls(("get-weather", {"city": "Oslo"})), made, box)
    assert not check.ok and check.kind == kind
    assert any(p.startswith(problem) for p in check.problems), check.problems


def test_defaults_and_empty_values_nobody_asked_for_are_harmless(box: Toolbox) -> None:
    want = calls(("get-weather", {"city": "Oslo"}))
    made = [("get-weather", {"city": "Oslo", "unit": "celsius", "days": None})]
    assert check_calls(want, made, box).ok


def test_alternatives_and_leaving_out(box: Toolbox) -> None:
    want = [
        ExpectedCall.model_validate(
            {
                "name": "get-weather",
                "arguments": {
                    "city": {"any_of": ["New York", "NYC"]},
                    "unit": {"any_of": ["fahrenheit", None]},
                },
            }
        )
    ]
    assert check_calls(want, [("get-weather", {"city": "nyc"})], box).ok
    assert check_calls(want, [("get-weather", {"city": "NYC", "unit": "fahrenheit"})], box).ok
    wrong = check_calls(want, [("get-weather", {"city": "Boston", "unit": "celsius"})], box)
    assert wrong.problems == (
        "get-weather: city 'Boston' not in ['New York', 'NYC']",
        "get-weather: unit 'celsius' not in ['fahrenheit']",
    )


def test_a_call_when_no_tool_fits_says_so(box: Toolbox) -> None:
    check = check_calls([], [("get-weather", {"city": "Oslo"})], box)
    assert check.kind == "extra-call"
    assert "no offered tool does what was asked" in check.feedback
    assert check_calls([], [], box).ok


def test_lists_compare_in_order_unless_the_schema_says_a_set(box: Toolbox) -> None:
    want = calls(("tag_photos", {"labels": ["sea", "sun"], "album": "trip"}))
    assert check_calls(want, [("tag_photos", {"labels": ["sun", "sea"], "album": "trip"})], box).ok
    assert not check_calls(want, [("tag_photos", {"labels": ["sun"], "album": "trip"})], box).ok
    ordered = ExpectedCall(name="get-weather", arguments={"city": ["a", "b"]})
    assert not check_calls([ordered], [("get-weather", {"city": ["b", "a"]})], box).ok


def test_a_value_a_function_declares_as_its_default_was_asked_for_implicitly() -> None:
    def pin(note_id: str, pinned: bool = True) -> str:
        """Pin a note."""
        return note_id

    box = Toolbox([Tool.from_function(pin)])
    want = calls(("pin", {"note_id": "n-1"}))
    assert check_calls(want, [("pin", {"note_id": "n-1", "pinned": True})], box).ok
    unpinned = check_calls(want, [("pin", {"note_id": "n-1", "pinned": False})], box)
    assert unpinned.problems == ("pin: pinned=False was not asked for",)

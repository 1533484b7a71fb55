"""The reply's words read out of a role's JSON answer piece by piece, and held where needed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freyr_dspy.serve._reply_guard import HeldText
from freyr_dspy.serve._reply_text import FieldText
from freyr_dspy.strategies import Evidence

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
others = st.dictionaries(
    st.text(max_size=8).filter(lambda key: key != "reply"),
    st.recursive(st.none() | st.integers() | texts, lambda inner: st.lists(inner, max_size=3)),
    max_size=3,
)


def fed(text: str, cuts: list[int]) -> tuple[list[str], FieldText]:
    field, pieces, start = FieldText("reply"), [], 0
    for cut in [*sorted({c % (len(text) + 1) for c in cuts}), len(text)]:
        pieces.append(field.feed(text[start:cut]))
        start = cut
    return pieces, field


@given(
    reply=texts,
    before=others,
    after=others,
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 2]),
    cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=30),
)
def test_any_answer_cut_anywhere_gives_back_exactly_the_reply(
    reply: str,
    before: dict[str, Any],
    after: dict[str, Any],
    ascii_only: bool,
    indent: int | None,
    cuts: list[int],
) -> None:
    answer = json.dumps({**before, "reply": reply, **after}, ensure_ascii=ascii_only, indent=indent)
    pieces, field = fed(answer, cuts)
    assert "".join(pieces) == reply
    assert field.done


@pytest.mark.parametrize(
    "answer",
    [
        "Hello there",  # not JSON: the reply comes whole at the end
        '["reply", "no"]',
        '{"reply": {"text": "structured"}}',  # not a string
        '{"other": {"reply": "nested"}}',  # not the top-level field
    ],
)
def test_answers_without_a_top_level_reply_string_give_nothing(answer: str) -> None:
    assert "".join(fed(answer, [3, 7, 11])[0]) == ""


def test_a_surrogate_pair_cut_in_two_waits_for_its_second_half() -> None:
    field = FieldText("reply")
    assert field.feed('{"reply": "a\\ud83d') == "a"
    assert field.feed("\\ude00") == "😀"
    assert field.feed(' b"}') == " b"


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    assert FieldText("reply").feed('{"reply": "x\\ud83d y"}') == "x\ufffd y"


def released(held: HeldText, pieces: list[str]) -> str:
    return "".join(held.push(piece) for piece in pieces) + held.finish()


def test_numbers_the_evidence_states_go_out_once_complete() -> None:
    held = HeldText(Evidence.of("weather in Paris", "14 C, wind 1,200 m"))
    assert held.push("  It is 1") == "It is"  # leading space dropped, the number held
    assert held.push("4") == ""
    assert held.push(" C with ") == " 14 C with"  # complete and stated; trailing space held
    assert released(held, ["wind 1,", "200 m "]) == " wind 1,200 m"
    assert not held.stopped


def test_the_first_invented_number_stops_the_release() -> None:
    held = HeldText(Evidence.of("weather in Paris", "14 C"))
    assert released(held, ["It is 14 C, and 3", "1 C in Rome."]) == "It is 14 C, and"
    assert held.stopped and held.push("more") == ""


def test_without_evidence_numbers_are_not_checked() -> None:
    assert released(HeldText(None), ["Pick 7", " of 9."]) == "Pick 7 of 9."

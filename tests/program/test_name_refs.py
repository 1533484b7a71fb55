"""Names held by position: references replace whole names and fill back to the same text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freyr_dspy.program._name_refs import (
    REFERENCE,
    fill_names,
    fill_names_in_json,
    fingerprint,
    map_strings,
    refer_names,
)

NAMES = ["Sage", "Sage Company Info", "check_sage", "Talk to a Human (24/7)", "name", "1"]


def test_longest_whole_names_become_references() -> None:
    text = (
        "Sage Company Info, then Sage; not Sagebrush, check_sage_x or sage. Talk to a Human (24/7)!"
    )
    referred = refer_names(text, NAMES)
    assert referred == (
        "{{name:1}}, then {{name:0}}; not Sagebrush, check_sage_x or sage. {{name:3}}!"
    )
    assert fill_names(referred, NAMES) == text


def test_a_name_listed_twice_keeps_its_first_position() -> None:
    assert refer_names("id", ["id", "name", "id"]) == "{{name:0}}"


def test_fill_refuses_a_position_past_the_list() -> None:
    with pytest.raises(ValueError, match="past the catalog's 6 names"):
        fill_names("{{name:6}}", NAMES)


def test_names_filled_into_json_stay_inside_their_strings() -> None:
    names = ['say "hi"', "back\\slash"]
    line = '{"{{name:1}}": ["{{name:0}}"]}'
    assert json.loads(fill_names_in_json(line, names)) == {"back\\slash": ['say "hi"']}


def test_map_strings_changes_keys_and_values_not_numbers() -> None:
    value = {"Sage": ["Sage", 3, {"x": "Sage"}], "n": None}
    referred = map_strings(value, lambda t: refer_names(t, NAMES))
    assert referred == {"{{name:0}}": ["{{name:0}}", 3, {"x": "{{name:0}}"}], "n": None}
    assert map_strings(referred, lambda t: fill_names(t, NAMES)) == value


def test_fingerprint_depends_on_order() -> None:
    assert fingerprint(NAMES) != fingerprint(list(reversed(NAMES)))
    assert fingerprint(NAMES) == fingerprint(list(NAMES))


@given(
    words=st.lists(
        st.sampled_from([*NAMES, "a", " ", ",", "\n", "Sag", "e", "_", "{", "}", ":", "12", "\\"])
    ),
)
def test_referring_then_filling_gives_the_text_back(words: list[str]) -> None:
    text = "".join(words)
    if REFERENCE.search(text):  # such text is refused (below)
        with pytest.raises(ValueError, match="already holds a name reference"):
            refer_names(text, NAMES)
        return
    assert fill_names(refer_names(text, NAMES), NAMES) == text

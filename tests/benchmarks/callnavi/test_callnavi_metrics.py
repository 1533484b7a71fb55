"""Hand-written cases for every rule of the CallNavi metrics (spec §3)."""

from __future__ import annotations

import pytest

from freyr_dspy.benchmarks.callnavi._metrics import (
    PAPER_DENOMINATORS,
    ast_match,
    ast_match_strict,
    by_difficulty,
    canonical_output,
    election_stability,
    levenshtein_stability,
    normalise_calls,
    order_match,
    routing_match,
    routing_match_strict,
    routing_normalise,
    structure_match,
    structure_match_strict,
    syntax_valid,
    syntax_valid_strict,
    values_match,
)

TRANSFER = {
    "API": ["getAccountID", "initiateTransfer"],
    "parameters": [
        {"customerID": "C1"},
        {"fromAccountID": "$$$", "amount": "500", "details": {"note": "$$$", "ref": "R1"}},
    ],
}


def calls(apis: list[str], params: object) -> dict[str, object]:
    return {"API": apis, "parameters": params}


# --------------------------------------------------------------------------- routing


def test_routing_normalisation_deletes_exactly_the_original_characters() -> None:
    assert routing_normalise("['getA', \"getB\"]\n `x`\\") == "geta,getbx"
    assert routing_normalise("a\tb\rc") == "a\tb\rc"  # tabs and carriage returns stay


def test_routing_is_case_insensitive_but_ordered_and_comma_separated() -> None:
    gold = ["getAccountID", "initiateTransfer"]
    assert routing_match("['getaccountid', 'INITIATETRANSFER']", gold)
    assert routing_match(["getAccountID", "initiateTransfer"], gold)  # a list is rendered
    assert not routing_match("['initiateTransfer', 'getAccountID']", gold)  # order matters
    assert not routing_match("getAccountID\ninitiateTransfer", gold)  # no comma
    assert not routing_match("APIs: ['getAccountID', 'initiateTransfer']", gold)  # extra text
    assert not routing_match("['getAccountID', 'initiateTransfer'].", gold)  # trailing period
    assert not routing_match("['getAccountID']", gold)  # duplicates/length must match


def test_strict_routing_is_exact() -> None:
    gold = ["getAccountID", "initiateTransfer"]
    assert routing_match_strict(["getAccountID", "initiateTransfer"], gold)
    assert not routing_match_strict(["getaccountid", "initiateTransfer"], gold)


# --------------------------------------------------------------------------- syntax


def test_original_syntax_swaps_quotes_strips_fences_and_accepts_any_json() -> None:
    assert syntax_valid("{'API': ['a'], 'parameters': [{}]}")  # python-dict style passes
    assert syntax_valid('```json\n{"API": ["a"], "parameters": [{}]}\n```')
    assert syntax_valid("[1, 2]") and syntax_valid("42")  # not an object, still "valid"
    assert not syntax_valid('{"API": ["a"], "parameters": [{"name": "O\'Brien"}]}')  # apostrophe
    assert not syntax_valid("{'API': ['a'], 'parameters': [{'x': True}]}")  # Python True
    assert not syntax_valid('{"API": ["a"],}')  # trailing comma
    assert not syntax_valid('{"API": ["a"], "parameters": []} Hope this helps!')


def test_strict_syntax_needs_the_call_list_object_as_written() -> None:
    assert syntax_valid_strict('```json\n{"API": ["a"], "parameters": [{}]}\n```')
    assert syntax_valid_strict('{"API": ["a"], "parameters": [{"name": "O\'Brien"}]}')
    assert not syntax_valid_strict("{'API': ['a'], 'parameters': [{}]}")
    assert not syntax_valid_strict("[1, 2]")
    assert not syntax_valid_strict('{"API": "a", "parameters": [{}]}')
    assert not syntax_valid_strict('{"API": ["a"], "parameters": ["x"]}')
    assert not syntax_valid_strict('{"API": ["a"], "parameters": [], "note": 1}')


# --------------------------------------------------------------------------- structure


def test_structure_needs_both_keys_and_gold_order_case_sensitive() -> None:
    assert not structure_match({}, TRANSFER)
    assert not structure_match({"API": TRANSFER["API"]}, TRANSFER)
    assert structure_match(dict(TRANSFER), TRANSFER)  # exact copy
    swapped = calls(["initiateTransfer", "getAccountID"], list(reversed(TRANSFER["parameters"])))
    assert not structure_match(swapped, TRANSFER)
    lower = calls(["getaccountid", "initiateTransfer"], TRANSFER["parameters"])
    assert not structure_match(lower, TRANSFER)


def test_structure_allows_extra_keys_and_ignores_values_and_nested_keys() -> None:
    pred = calls(
        TRANSFER["API"],
        [
            {"customerID": "wrong", "extra": 1},
            {"fromAccountID": "x", "amount": 7, "details": {}},
        ],
    )
    assert structure_match(pred, TRANSFER)
    missing = calls(TRANSFER["API"], [{}, {"fromAccountID": "x", "amount": 7, "details": {}}])
    assert not structure_match(missing, TRANSFER)


def test_structure_requires_equal_parameter_list_lengths() -> None:
    gold_empty = calls(["getCartItems"], [])
    assert not structure_match(calls(["getCartItems"], [{}]), gold_empty)  # [{}] vs []
    assert structure_match(calls(["getCartItems"], []), gold_empty)
    gold_obj = calls(["getCartItems"], [{}])
    assert structure_match(calls(["getCartItems"], [{"anything": 1}]), gold_obj)


def test_shape_errors_that_crash_the_original_score_zero() -> None:
    assert not structure_match(calls(TRANSFER["API"], {"customerID": "C1"}), TRANSFER)
    assert not structure_match(calls(TRANSFER["API"], ["a", "b"]), TRANSFER)
    assert not structure_match("not an object", TRANSFER)
    object_form_gold = calls(["getA"], {"id": "1"})  # 2024 format: the original raises
    assert not structure_match(calls(["getA"], [{"id": "1"}]), object_form_gold)
    assert structure_match(dict(object_form_gold), object_form_gold)  # exact copy shortcut


def test_strict_structure_wants_exactly_the_gold_keys() -> None:
    extra = calls(
        TRANSFER["API"],
        [
            {"customerID": "C1", "extra": 1},
            {"fromAccountID": "x", "amount": "1", "details": {}},
        ],
    )
    assert structure_match(extra, TRANSFER) and not structure_match_strict(extra, TRANSFER)
    assert structure_match_strict(calls(["getCartItems"], [{}]), calls(["getCartItems"], []))


# --------------------------------------------------------------------------- AST


def test_ast_top_level_placeholder_is_a_wildcard_nested_one_is_literal() -> None:
    good = calls(
        TRANSFER["API"],
        [
            {"customerID": "C1"},
            {"fromAccountID": "AC-9", "amount": "500", "details": {"note": "$$$", "ref": "R1"}},
        ],
    )
    assert ast_match(good, TRANSFER)
    nested_filled = calls(
        TRANSFER["API"],
        [
            {"customerID": "C1"},
            {"fromAccountID": "AC-9", "amount": "500", "details": {"note": "rent", "ref": "R1"}},
        ],
    )
    assert not ast_match(nested_filled, TRANSFER)  # the original quirk
    assert ast_match_strict(nested_filled, TRANSFER)  # strict: wildcards at any depth


def test_ast_predicted_placeholder_for_a_concrete_gold_value_fails() -> None:
    pred = calls(
        TRANSFER["API"],
        [
            {"customerID": "$$$"},
            {"fromAccountID": "$$$", "amount": "500", "details": {"note": "$$$", "ref": "R1"}},
        ],
    )
    assert not ast_match(pred, TRANSFER) and not ast_match_strict(pred, TRANSFER)


def test_ast_is_type_case_and_whitespace_sensitive() -> None:
    base = {"customerID": "C1"}
    for value in (500, "500 ", "500.0"):
        pred = calls(
            TRANSFER["API"],
            [
                base,
                {"fromAccountID": "x", "amount": value, "details": {"note": "$$$", "ref": "R1"}},
            ],
        )
        assert not ast_match(pred, TRANSFER), value
        assert not ast_match_strict(pred, TRANSFER), value
    wrong_case = calls(
        TRANSFER["API"],
        [
            {"customerID": "c1"},
            {"fromAccountID": "x", "amount": "500", "details": {"note": "$$$", "ref": "R1"}},
        ],
    )
    assert not ast_match(wrong_case, TRANSFER)


def test_ast_gold_empty_object_accepts_anything() -> None:
    gold = calls(["updateAccountHolderDetails"], [{"accountID": "1", "holderDetails": {}}])
    pred = calls(["updateAccountHolderDetails"], [{"accountID": "1", "holderDetails": "Ann"}])
    assert ast_match(pred, gold) and ast_match_strict(pred, gold)


def test_ast_extra_keys_pass_the_original_but_not_strict() -> None:
    gold = calls(["getA"], [{"id": "1"}])
    pred = calls(["getA"], [{"id": "1", "verbose": True}])
    assert ast_match(pred, gold) and not ast_match_strict(pred, gold)


def test_ast_zero_argument_calls_in_both_encodings() -> None:
    empty_list = calls(["getCartItems"], [])
    empty_obj = calls(["getCartItems"], [{}])
    assert not ast_match(empty_obj, empty_list)  # what the prompt suggests fails the original
    assert ast_match(empty_list, empty_list) and ast_match(empty_obj, empty_obj)
    assert ast_match_strict(empty_obj, empty_list) and ast_match_strict(empty_list, empty_obj)


def test_ast_repeated_api_and_order() -> None:
    gold = calls(
        ["getTaxInfo", "fileTaxReturn", "getTaxInfo"],
        [{"personalID": "1"}, {"personalID": "1", "taxData": "$$$"}, {"personalID": "1"}],
    )
    assert ast_match(
        calls(
            gold["API"],
            [{"personalID": "1"}, {"personalID": "1", "taxData": 5}, {"personalID": "1"}],
        ),
        gold,
    )
    assert not ast_match(calls(["getTaxInfo", "fileTaxReturn"], gold["parameters"][:2]), gold)


def test_order_flag_needs_equal_api_lists_and_lengths_only() -> None:
    pred = calls(TRANSFER["API"], [{"x": 1}, {"y": 2}])
    assert order_match(pred, TRANSFER) and not structure_match(pred, TRANSFER)
    assert not order_match(calls(TRANSFER["API"], [{}]), TRANSFER)
    assert not order_match({"API": TRANSFER["API"]}, TRANSFER)


def test_values_match_and_normalise_calls() -> None:
    assert values_match({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "$$$"}]})
    assert not values_match({"a": [1]}, {"a": [1, 2]})
    assert not values_match(True, 1) and not values_match(1, True)
    assert normalise_calls(calls(["a", "b"], [])) == [("a", {}), ("b", {})]
    assert normalise_calls(calls(["a"], {"k": 1})) == [("a", {"k": 1})]
    assert normalise_calls(calls(["a", "b"], [{}])) is None
    assert normalise_calls(calls([1], [{}])) is None


# --------------------------------------------------------------------------- aggregation


def test_per_difficulty_all_and_macro_from_the_data() -> None:
    items = [("easy", 1.0), ("easy", 0.0), ("medium", 1.0), ("hard", 0.0), ("hard", 0.0)]
    table = by_difficulty(items)
    assert table == pytest.approx(
        {"easy": 0.5, "medium": 1.0, "hard": 0.0, "all": 0.4, "macro": 0.5}
    )
    assert by_difficulty([]) == {}
    only_easy = by_difficulty([("easy", 1.0)])
    assert set(only_easy) == {"easy", "all", "macro"} and only_easy["macro"] == 1.0


def test_paper_denominators_are_hard_coded() -> None:
    table = by_difficulty([("easy", 1.0)] * 456 + [("hard", 1.0)] * 86, PAPER_DENOMINATORS)
    assert table["easy"] == 1.0
    assert table["hard"] == pytest.approx(86 / 85)  # the quirk: hard can exceed 1
    assert table["all"] == pytest.approx(542 / 729)


# --------------------------------------------------------------------------- stability


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        (["a"] * 5, 1.0),
        (["a"] * 4 + ["b"], 0.75),
        (["a", "a", "a", "b", "c"], 0.5),
        (["a", "a", "a", "b", "b"], 1 / 3),
        (["a", "a", "b", "c", "d"], 0.25),
        (["a", "a", "b", "b", "c"], 0.0),
        (["a", "b", "c", "d", "e"], 0.0),
    ],
)
def test_election_stability_reproduces_the_paper_examples(
    outputs: list[str], expected: float
) -> None:
    assert election_stability(outputs) == pytest.approx(expected)


def test_stability_normalises_case_whitespace_and_quotes() -> None:
    assert election_stability(['{"API": ["A"]}', "{'api':\n ['a']}"]) == 1.0
    assert election_stability([]) == 0.0


def test_levenshtein_stability() -> None:
    assert levenshtein_stability(["abcd", "abcd", "abce"]) == pytest.approx((1 + 0.75) / 2)
    assert levenshtein_stability(["", ""]) == 1.0  # two empty outputs agree
    assert levenshtein_stability(["x"]) == 1.0
    assert levenshtein_stability(["ab", ""]) == 0.0


def test_a_failed_run_counts_as_the_empty_call_list() -> None:
    assert canonical_output(None) == '{"API":[],"parameters":[]}'
    ok = canonical_output({"API": ["a"], "parameters": [{}]})
    assert election_stability([ok, ok, canonical_output(None)]) == pytest.approx(0.5)

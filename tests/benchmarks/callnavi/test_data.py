from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from freyr_dspy.benchmarks.callnavi import (
    available_domains,
    callnavi_dir,
    load_domain,
    quality_flags,
)
from freyr_dspy.benchmarks.callnavi._quality import flags_by_question
from freyr_dspy.errors import ConfigError, DataError
from tests.support.paths import DATA_DIR

FIXTURES = DATA_DIR / "callnavi"


def test_domains_are_found_in_the_folder_or_its_callnavi_subfolder(tmp_path: Path) -> None:
    assert callnavi_dir(FIXTURES) == FIXTURES
    shutil.copytree(FIXTURES, tmp_path / "callnavi")
    assert callnavi_dir(tmp_path) == tmp_path / "callnavi"
    assert available_domains(FIXTURES) == ["pets", "phones", "schema"]


def test_missing_data_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--data"):
        callnavi_dir(tmp_path)


def test_unknown_domain_lists_the_ones_found() -> None:
    with pytest.raises(ConfigError, match="found: pets, phones, schema"):
        load_domain(FIXTURES, "bank")


def test_typed_parameters_nested_hints_and_every_return_form() -> None:
    pets = load_domain(FIXTURES, "pets")
    assert [a.name for a in pets.apis][:2] == ["getOwnerID", "getPetList"]
    register = pets.api("registerPet")
    assert register is not None and register.form == "typed"
    assert register.parameters["petDetails"] == {
        "name": "string",
        "species": "cat/dog/...",
        "age": "number",
    }
    assert pets.api("getOwnerID").return_names == ["OwnerID"]  # type: ignore[union-attr]
    assert pets.api("getPetList").return_names == ["PetList"]  # type: ignore[union-attr]
    assert pets.api("bookGrooming").return_names == ["BookingID", "BookingStatus"]  # type: ignore[union-attr]
    assert pets.api("getOpeningHours").parameters == {}  # type: ignore[union-attr]


def test_plain_name_lists_and_empty_list_zero_argument_apis() -> None:
    phones = load_domain(FIXTURES, "phones")
    change = phones.api("changePlan")
    assert change is not None and change.form == "names"
    assert change.parameter_names == ["customerID", "newPlanID"]
    assert change.parameters == {"customerID": None, "newPlanID": None}
    assert phones.api("listPlans").parameters == {}  # type: ignore[union-attr]
    # the questions of this domain come as one JSON array, not JSONL
    assert [q.id for q in phones.questions] == ["tel001", "tel002"]


def test_bare_list_catalog_with_json_schema_parameters() -> None:
    schema = load_domain(FIXTURES, "schema")
    room = schema.api("getRoom")
    assert room is not None and room.form == "schema"
    assert room.parameters == {"roomID": "string", "stay": {"from": "string", "to": "string"}}
    assert schema.api("listRooms").parameters == {}  # type: ignore[union-attr]
    assert schema.questions[0].text.startswith("Show room R1")  # a bare-string question


def test_questions_are_kept_exactly_as_written() -> None:
    pets = {q.id: q for q in load_domain(FIXTURES, "pets").questions}
    assert pets["pet02"].gold["parameters"] == []  # zero-argument call written as []
    assert pets["pet03"].gold["parameters"] == [{}]  # ... and as [{}]
    assert pets["pet07"].gold["parameters"] == {"bookingID": "BK-1"}  # 2024 object form
    assert pets["pet03"].text.endswith(" ")  # whitespace is reported, not stripped
    assert pets["pet05"].difficulty == "hard" and pets["pet05"].line == 5


def _write(folder: Path, apis: object, lines: list[str]) -> Path:
    (folder / "x.apis.json").write_text(json.dumps(apis), encoding="utf-8")
    (folder / "x.questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


GOOD_API = {
    "api_ports": [{"name": "a", "parameters": {}, "description": "", "returnParameter": ""}]
}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x1", "question": [', "x.questions.jsonl:2: invalid JSON"),
        (
            '{"id": "x1", "question": "q", "difficulty": "easy"}',
            ":2: missing field(s): ground_truth",
        ),
        (
            '{"id": "x1", "question": "q", "ground_truth": {"API": ["a"], "parameters": [{}]}, '
            '"difficulty": "tricky"}',
            ":2: difficulty 'tricky'",
        ),
        (
            '{"id": "x1", "question": "q", "ground_truth": {"API": "a", "parameters": []}, '
            '"difficulty": "easy"}',
            ":2: ground_truth must be an object with an 'API' list",
        ),
        (
            '{"id": "x1", "question": [{"role": "user"}], "ground_truth": {"API": [], '
            '"parameters": []}, "difficulty": "easy"}',
            ":2: question must be a list",
        ),
    ],
)
def test_malformed_records_give_path_and_line(tmp_path: Path, line: str, message: str) -> None:
    ok = (
        '{"id": "x0", "question": "q", "ground_truth": {"API": ["a"], "parameters": [{}]}, '
        '"difficulty": "easy"}'
    )
    _write(tmp_path, GOOD_API, [ok, line])
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_domain(tmp_path, "x")


def test_malformed_catalogs_are_rejected(tmp_path: Path) -> None:
    ok = (
        '{"id": "x0", "question": "q", "ground_truth": {"API": ["a"], "parameters": [{}]}, '
        '"difficulty": "easy"}'
    )
    twice = {"api_ports": [{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}]}
    _write(tmp_path, twice, [ok])
    with pytest.raises(DataError, match="duplicate API names: a"):
        load_domain(tmp_path, "x")
    other = tmp_path / "other"
    other.mkdir()
    _write(other, {"api_ports": [{"name": "a", "parameters": "text"}]}, [ok])
    with pytest.raises(DataError, match="parameters must be an object or a list"):
        load_domain(other, "x")


def test_quality_flags_report_the_known_issue_kinds() -> None:
    table = flags_by_question(quality_flags(load_domain(FIXTURES, "pets")))
    assert table["pet02"] == ["parameters_length_differs_from_API_length"]
    assert "zero_arg_call_encoded_as_empty_dict" in table["pet03"]
    assert "question_text_leading_or_trailing_whitespace" in table["pet03"]
    assert "placeholder_nested_inside_object_or_list" in table["pet05"]
    assert "ground_truth_api_not_in_domain_api_list" in table["pet06"]
    assert "ground_truth_param_key_not_in_api_spec" in table["pet06"]
    assert "api_spec_param_absent_from_ground_truth" in table["pet06"]
    assert "question_text_contains_literal_dollar_placeholder" in table["pet06"]
    assert "parameters_object_form" in table["pet07"]
    assert "medium_with_single_call" in table["pet07"]
    assert "pet01" not in table


def test_quality_flags_match_the_data_export_report(data_dir: Path) -> None:
    """Our checks find exactly the questions the export's data_quality.json lists."""
    folder = callnavi_dir(data_dir)
    reference = json.loads((folder / "data_quality.json").read_text(encoding="utf-8"))["details"]
    mine: dict[str, list[str]] = {}
    prefixes = []
    for domain in available_domains(folder):
        data = load_domain(folder, domain)
        prefixes.append(data.questions[0].id[:3])
        for flag in quality_flags(data):
            mine.setdefault(flag.kind, []).append(str(flag.question))
    for kind, entries in reference.items():
        ids = [e if isinstance(e, str) else e["id"] for e in entries]
        expected = sorted(i for i in ids if i.startswith(tuple(prefixes)))
        assert sorted(mine.get(kind, [])) == expected, kind

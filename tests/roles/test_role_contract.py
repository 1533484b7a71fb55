"""Conformance suite run over every registered role (roles added by any strategy included).

Each role must: have a documented signature whose fields are all typed and described; be
recognised by the shipped fakes; return its declared outputs with their declared types; keep
its compiled state (instructions, demos) across save -> load; and match its checked-in
``signatures/<role>.json`` dump (regenerate with ``freyr signatures dump``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import dspy
import pytest
from pydantic import TypeAdapter

from freyr_dspy.roles import Role, load_roles
from freyr_dspy.roles._signature_dump import dump_signature
from freyr_dspy.testing import FakeCall, FunctionLM
from tests.support.paths import PROJECT_DIR
from tests.support.role_samples import sample_inputs, sample_outputs

SIGNATURES_DIR = PROJECT_DIR / "signatures"
ROLE_IDS = sorted(load_roles())
DSPY_DEFAULT_DESC = re.compile(r"^\$\{\w+\}$")


@pytest.fixture(params=ROLE_IDS)
def role_id(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def role_cls(role_id: str) -> type[Role]:
    return load_roles()[role_id]


def test_role_ids_are_snake_case(role_id: str) -> None:
    assert re.fullmatch(r"[a-z][a-z0-9_]*", role_id)


def test_signature_is_documented_and_typed(role_id: str) -> None:
    cls = role_cls(role_id)
    assert (cls.__doc__ or "").strip(), f"{cls.__name__} needs a docstring"
    signature = cls.signature
    instructions = signature.instructions.strip()
    assert instructions and not instructions.startswith("Given the fields"), (
        f"{signature.__name__} needs a docstring: it is the role's instruction"
    )
    assert signature.output_fields, "a role must declare outputs"
    for name, info in {**signature.input_fields, **signature.output_fields}.items():
        assert info.annotation is not None, f"{signature.__name__}.{name} has no type"
        desc = (info.json_schema_extra or {}).get("desc", "")
        assert desc and not DSPY_DEFAULT_DESC.match(desc), (
            f"{signature.__name__}.{name} needs desc=..."
        )


def _answering(role_id: str, outputs: dict[str, Any]) -> FunctionLM:
    return FunctionLM(lambda call: outputs if call.role == role_id else None)


@pytest.mark.parametrize("adapter", ["json", "chat"])
def test_returns_declared_outputs_under_a_fake(role_id: str, adapter: str) -> None:
    signature = role_cls(role_id).signature
    engine = _answering(role_id, sample_outputs(signature))
    module = role_cls(role_id)()
    module.set_lm(dspy.LM("fake/contract", engine=engine, cache=False))
    active = dspy.JSONAdapter() if adapter == "json" else dspy.ChatAdapter()
    with dspy.context(adapter=active):
        prediction = module(**sample_inputs(signature))
    call: FakeCall = engine.calls[0]
    assert call.role == role_id, "the fakes must recognise this role from its prompt"
    # NOTE: native tool calling keeps the history and tools out of the prompt's fields.
    hidden = {
        n
        for n, f in signature.input_fields.items()
        if f.annotation in (dspy.History, list[dspy.Tool])
    }
    assert set(call.inputs) == set(signature.input_fields) - hidden
    for name, info in signature.output_fields.items():
        assert name in prediction, f"missing output {name!r}"
        TypeAdapter(info.annotation).validate_python(prediction[name])


def test_state_survives_save_and_load(role_id: str, tmp_path: Path) -> None:
    cls = role_cls(role_id)
    signature = cls.signature
    module = cls()
    demo = dspy.Example(**sample_inputs(signature), **sample_outputs(signature)).with_inputs(
        *signature.input_fields
    )
    for _, predictor in module.named_predictors():
        predictor.demos = [demo]
        predictor.signature = predictor.signature.with_instructions("Compiled: be brief.")
    path = tmp_path / f"{role_id}.json"
    module.save(str(path))
    assert "api_key" not in path.read_text(encoding="utf-8")
    loaded = cls()
    loaded.load(str(path))
    assert loaded.dump_state() == module.dump_state()
    for _, predictor in loaded.named_predictors():
        assert predictor.signature.instructions == "Compiled: be brief."
        # NOTE: DSPy stores History and Tool demo values as text; compare the plain fields.
        plain = [
            k
            for k, f in signature.fields.items()
            if f.annotation not in (dspy.History, list[dspy.Tool])
        ]
        assert [{k: d[k] for k in plain} for d in predictor.demos] == [{k: demo[k] for k in plain}]
    # the loaded role still answers, and the fakes still recognise it (by its fields)
    engine = _answering(role_id, sample_outputs(signature))
    loaded.set_lm(dspy.LM("fake/contract", engine=engine, cache=False))
    with dspy.context(adapter=dspy.JSONAdapter()):
        prediction = loaded(**sample_inputs(signature))
    assert all(name in prediction for name in signature.output_fields)


def test_signature_dump_is_up_to_date(role_id: str) -> None:
    path = SIGNATURES_DIR / f"{role_id}.json"
    hint = "run: freyr signatures dump"
    assert path.is_file(), f"{path} is missing; {hint}"
    checked_in = json.loads(path.read_text(encoding="utf-8"))
    assert checked_in == dump_signature(role_cls(role_id).signature), f"{path} is stale; {hint}"


def test_no_dump_without_a_role() -> None:
    stale = {p.stem for p in SIGNATURES_DIR.glob("*.json")} - set(ROLE_IDS)
    assert not stale, f"dumps of unregistered roles: {sorted(stale)}; delete them"

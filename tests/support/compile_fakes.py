"""Fakes for compile tests: a model that is only good with demos or a learned instruction.

``SkilledLM`` answers the built-in roles from a gold table, but only once the prompt shows
it how (demos, or an instruction containing ``MAGIC``); otherwise it answers like a weak
model (no tool). Prompts of the optimizers themselves (MIPROv2's proposer, GEPA's
reflection, SIMBA's advice) are answered generically from the output fields the system
prompt lists, and the instructions they propose contain ``MAGIC``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.benchmarks._todo import TEST_ROWS, TodoBenchmark, load_rows
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.settings import Settings
from freyr_dspy.testing import Answer, FakeCall, FakeEngine, register_fake
from tests.support.paths import DATA_DIR

FIXTURE = DATA_DIR / "todo_train.jsonl"
OPTIONS = EvalOptions(data_dir=Path("unused"))

MAGIC = "Always pick the tool whose name matches the request."
_OUTPUT = re.compile(r"^\s*\d+\.\s*`(\w+)`\s*\(([^)]*)\)", re.M)


def gold_table(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Message -> gold calls."""
    return {row["message"]: list(row.get("calls", [])) for row in rows}


def todo_gold(trainset_path: Path = FIXTURE) -> dict[str, list[dict[str, Any]]]:
    rows = [r.model_dump() for r in load_rows(trainset_path)]
    return gold_table([*rows, *TEST_ROWS])


def project(tmp_path: Path) -> Settings:
    """A project folder whose trainsets/todo.jsonl is the small test fixture."""
    (tmp_path / "trainsets").mkdir(exist_ok=True)
    shutil.copy(FIXTURE, tmp_path / "trainsets" / "todo.jsonl")
    return Settings(project_dir=tmp_path)


def skilled_program(name: str = "skilled") -> tuple[FreyrProgram, SkilledLM]:
    """A todo program whose every role is played by a shared ``SkilledLM``."""
    engine = SkilledLM(todo_gold())
    register_fake(name, engine)
    program = TodoBenchmark().make_program("freyr", OPTIONS)
    program.apply_assignment({r: RoleModel(model=f"fake/{name}") for r in program.role_names})
    return program, engine


class SkilledLM(FakeEngine):
    """Right when taught (demos or MAGIC in the instructions), wrong otherwise."""

    def __init__(
        self, gold: Mapping[str, list[dict[str, Any]]], knows: tuple[str, ...] = ()
    ) -> None:
        super().__init__()
        self.gold = gold
        #: Messages starting with one of these are answered right even untaught.
        self.knows = knows

    def answer(self, call: FakeCall) -> Answer:
        if not call.role:
            return generic_answer(call)
        message = call.inputs.get("message", "")
        calls = self.gold.get(message)
        taught = (
            demos_shown(call.prompt) > 0 or MAGIC in call.prompt or message.startswith(self.knows)
        )
        if call.role == "intent":
            tools = [c["tool"] for c in calls or []] if taught else []
            return {"intents": tools or ["conversation"]}
        if call.role == "parameters":
            name = re.search(r"^\s*-\s*([\w.-]+)\s*:", call.inputs.get("tool", ""), re.M)
            args = next(
                (c["arguments"] for c in calls or [] if name and c["tool"] == name.group(1)), {}
            )
            return {"arguments": args}
        return {"reply": "Done."}


def demos_shown(prompt: str) -> int:
    """How many demos a prompt shows (DSPy's formats also show the input template once)."""
    if "[[ ## message ## ]]" in prompt:
        return prompt.count("[[ ## message ## ]]") - 2
    return prompt.count("<message>\n") - 1


def generic_answer(call: FakeCall) -> Answer:
    """Fill every output field the system prompt lists (optimizer-internal prompts)."""
    section = call.prompt.split("Your output fields are:", 1)[-1].split("All interactions", 1)[0]
    outputs: dict[str, Any] = {}
    for name, kind in _OUTPUT.findall(section):
        if kind.startswith("dict"):
            outputs[name] = {}
        elif kind.startswith("list"):
            outputs[name] = []
        elif kind.startswith(("int", "float")):
            outputs[name] = 1
        else:
            outputs[name] = f"Handle the user's request. {MAGIC}"
    return outputs or f"```\nHandle the user's request. {MAGIC}\n```"

"""``freyr+check_alone``: the confirm role checks the plan against the message alone, while
the planning role still reads the conversation."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox

EARLIER = [
    {"role": "user", "content": "What notes do I have about music?"},
    {"role": "tool", "content": "list_notes(tag='music') returned [{'id': 'note-1'}]"},
    {"role": "assistant", "content": "You have one: Band rehearsal setlist."},
]


def create_note(title: str) -> str:
    """Create a note."""
    return "created note-4"


def seen_by_role(**settings: Any) -> dict[str, str]:
    """What each role was shown as the conversation, for a later turn of a conversation."""
    seen: dict[str, str] = {}

    def answer(call: FakeCall) -> Any:
        seen[call.role] = str(call.inputs.get("conversation", ""))
        if call.role == "intent":
            return {"intents": ["create_note"]}
        if call.role == "confirm":
            return {"asked": {"create_note": True}}
        if call.role == "parameters":
            return {"arguments": {"title": "Gig on Friday"}}
        return {"reply": "Created."}

    prog = FreyrProgram(
        toolbox=Toolbox([Tool.from_function(create_note)]),
        strategy=make_strategy("freyr", abstain=True, **settings),
    )
    prog.set_lm(dspy.LM("fake/alone", engine=FunctionLM(answer), cache=False))
    result = prog(message="Now make a note 'Gig on Friday'", conversation=EARLIER).result
    assert [c.tool for c in result.calls] == ["create_note"]
    return seen


def test_the_check_reads_the_message_alone() -> None:
    seen = seen_by_role(check_alone=True)
    assert "Band rehearsal" in seen["intent"]
    assert "Band rehearsal" not in seen["confirm"] and "list_notes" not in seen["confirm"]


def test_without_it_the_check_reads_the_conversation() -> None:
    assert "Band rehearsal" in seen_by_role()["confirm"]

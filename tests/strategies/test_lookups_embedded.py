"""Looking up before acting, on the real fast model (Qwen2.5-Coder-0.5B, greedy).

The fakes (test_lookups.py) fix what the model writes; here the 0.5B writes what it writes for
an action whose id the user never said, and the listing must be read before the action is
made, the action must land on the note the user named, and no other note may change.
"""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.backends import is_installed
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import FAST_MODEL
from freyr_dspy.tools import Toolbox

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        not is_installed(FAST_MODEL), reason="the Qwen 0.5B parts are not installed"
    ),
]


class Notes:
    """A notes app: notes with a title and a pin."""

    __freyr_reads__ = ("list_notes",)

    def __init__(self) -> None:
        self.notes = [
            {"id": "note-1", "title": "Vows draft", "pinned": True},
            {"id": "note-2", "title": "Caterer contacts", "pinned": False},
            {"id": "note-3", "title": "Gym log", "pinned": False},
        ]

    def list_notes(self) -> list[dict[str, Any]]:
        """List the notes: their id, title and whether they are pinned."""
        return [dict(n) for n in self.notes]

    def pin_note(self, note_id: str, pinned: bool = True) -> str:
        """Pin a note, or unpin it.

        Args:
            note_id: the note's id, e.g. 'note-1'.
            pinned: true to pin, false to unpin.
        """
        note = next((n for n in self.notes if n["id"] == note_id), None)
        if note is None:
            raise ValueError(f"no note {note_id}; notes: {', '.join(n['id'] for n in self.notes)}")
        note["pinned"] = pinned
        return f"{note_id} {'pinned' if pinned else 'unpinned'}"


def test_an_id_the_user_never_said_is_read_before_the_action() -> None:
    app = Notes()
    program = FreyrProgram.for_model(
        FAST_MODEL, toolbox=Toolbox.from_object(app), sampling={"temperature": 0, "seed": 0}
    )
    result = program(message="Pin my gym log note", calls_only=True).result
    made = [(c.tool, c.arguments, c.outcome.ok) for c in result.calls]
    assert made[0][0] == "list_notes", made
    assert ("pin_note", {"note_id": "note-3"}, True) in [
        (tool, {k: v for k, v in arguments.items() if k == "note_id"}, ok)
        for tool, arguments, ok in made
    ], made
    assert [n["pinned"] for n in app.notes] == [True, False, True]

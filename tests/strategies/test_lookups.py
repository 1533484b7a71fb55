"""Looking up before acting: a read-only tool called for an id the user never said."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram, Session
from freyr_dspy.schemas import CallRecord, Outcome
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._lookups import lookups_for, resolved_ids
from freyr_dspy.strategies._run import Run
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


class Shelf:
    """Books on a shelf: a listing, a lookup by id, and one action."""

    __freyr_private__ = ("snapshot",)
    __freyr_reads__ = ("list_books", "read_book")

    def __init__(self) -> None:
        self.books = {
            "bk-7": {"title": "Dune", "lent": False},
            "bk-9": {"title": "Emma", "lent": False},
        }

    def list_books(self) -> list[dict[str, Any]]:
        """List the books (id, title, lent)."""
        return [{"id": k, **v} for k, v in self.books.items()]

    def read_book(self, book_id: str) -> dict[str, Any]:
        """One book in full.

        Args:
            book_id: the book's id.
        """
        return self.books[book_id]

    def lend_book(self, book_id: str) -> str:
        """Mark a book as lent.

        Args:
            book_id: the book's id.
        """
        if book_id not in self.books:
            raise ValueError(f"no book {book_id}")
        self.books[book_id]["lent"] = True
        return f"{book_id} lent"

    def snapshot(self) -> dict[str, Any]:
        return dict(self.books)


def shelf_program(shelf: Shelf, **settings: Any) -> tuple[FreyrProgram, FunctionLM]:
    """Intent plans ``lend_book``; its id is the listed one once a listing is in view."""

    def answer(call: FakeCall) -> Any:
        seen = call.inputs.get("conversation", "")
        if call.role == "intent":
            return {"intents": ["lend_book"]}
        if call.role == "parameters":
            return {"arguments": {"book_id": "bk-9" if '"bk-9"' in seen else "bk-1"}}
        return {"reply": "Lent Emma."}

    engine = FunctionLM(answer)
    toolbox = Toolbox.from_object(shelf)
    prog = FreyrProgram(toolbox=toolbox, strategy=make_strategy("freyr", **settings))
    prog.set_lm(dspy.LM("fake/lookups", engine=engine, cache=False))
    return prog, engine


def test_from_object_marks_the_reads_read_only() -> None:
    toolbox = Toolbox.from_object(Shelf())
    assert [t.name for t in toolbox if t.read_only] == ["list_books", "read_book"]
    assert not toolbox.get("lend_book").read_only


def test_an_id_nobody_said_is_looked_up_before_the_action() -> None:
    shelf = Shelf()
    prog, engine = shelf_program(shelf)
    result = prog(message="Lend out Emma").result
    # the made-up bk-1 waited; the listing ran (no model call: it needs no value), and the
    # action was written again with the listing in view
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("list_books", {}),
        ("lend_book", {"book_id": "bk-9"}),
    ]
    assert shelf.books["bk-9"]["lent"] is True
    assert engine.roles_called() == ["intent", "parameters", "parameters", "summary"]


def test_a_read_that_needs_the_missing_id_itself_is_not_a_lookup() -> None:
    run = Run("freyr", Toolbox.from_object(Shelf()), "Lend out Emma", "", str)
    assert [t.name for t in lookups_for(run, ["lend_book"])] == ["list_books"]


def test_an_id_in_an_earlier_turn_needs_no_lookup() -> None:
    shelf = Shelf()
    prog, engine = shelf_program(shelf)
    chat = Session(prog)
    chat.turns = [
        {"role": "user", "content": "What books do I have?"},
        {"role": "tool", "content": 'list_books() returned [{"id": "bk-9", "title": "Emma"}]'},
    ]
    result = chat.send("Lend out Emma")
    assert [(c.tool, c.arguments) for c in result.calls] == [("lend_book", {"book_id": "bk-9"})]
    assert engine.roles_called().count("parameters") == 1


def test_a_call_the_tool_refuses_looks_up_before_its_retry() -> None:
    """With one round nothing waits: the made-up id runs, fails, and the retry sees a listing."""
    shelf = Shelf()
    prog, engine = shelf_program(shelf, rounds=1)
    result = prog(message="Lend out Emma").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("list_books", {}),
        ("lend_book", {"book_id": "bk-9"}),
    ]
    assert result.calls[1].errors == ["lend_book failed: no book bk-1"]
    assert shelf.books["bk-9"]["lent"] is True
    assert engine.roles_called().count("intent") == 1


def test_tools_without_reads_keep_their_calls() -> None:
    """A toolbox with no read-only tool: the action is made as written, in one round."""
    shelf = Shelf()
    prog, engine = shelf_program(shelf)
    only_action = Toolbox.from_object(shelf, methods=["lend_book"])
    result = prog(message="Lend out Emma", toolbox=only_action).result
    assert result.calls[0].tool == "lend_book"
    assert result.calls[0].arguments == {"book_id": "bk-1"}
    assert engine.roles_called().count("intent") == 1


def test_a_read_is_kept_without_the_plan_check_and_an_action_is_still_checked() -> None:
    """The abstain check guards against actions; a read-only tool changes nothing."""
    shelf = Shelf()
    checked: list[list[str]] = []

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["list_books", "lend_book"]}
        if call.role == "confirm":
            checked.append(sorted(call.inputs["tools"].split("\n")))
            return {"asked": {"list_books": False, "lend_book": False}}
        return {"reply": "Here are your books."}

    prog = FreyrProgram(
        toolbox=Toolbox.from_object(shelf), strategy=make_strategy("freyr", abstain=True)
    )
    prog.set_lm(dspy.LM("fake/reads", engine=FunctionLM(answer), cache=False))
    result = prog(message="What books do I have?").result
    assert [c.tool for c in result.calls] == ["list_books"]
    assert len(checked) == 1 and "lend_book" in checked[0][0] and "list_books" not in str(checked)


def test_a_name_written_for_an_id_takes_the_id_of_the_record_the_lookup_returned() -> None:
    """Qwen 1.5B wrote "running-plan" for the note titled "Running plan", listing in view."""
    shelf = Shelf()

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["lend_book"]}
        if call.role == "parameters":
            return {"arguments": {"book_id": "emma"}}
        return {"reply": "Lent Emma."}

    prog = FreyrProgram(toolbox=Toolbox.from_object(shelf), strategy=make_strategy("freyr"))
    prog.set_lm(dspy.LM("fake/names", engine=FunctionLM(answer), cache=False))
    result = prog(message="Lend out Emma").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("list_books", {}),
        ("lend_book", {"book_id": "bk-9"}),
    ]
    assert shelf.books["bk-9"]["lent"] is True


def listing_of(*titles: str) -> CallRecord:
    """A listing that returned books ``bk-1``, ``bk-2``... with these titles."""
    books = [{"id": f"bk-{n}", "title": title} for n, title in enumerate(titles, start=1)]
    return CallRecord(tool="list_books", outcome=Outcome(ok=True, message="", data=books))


def test_a_name_two_records_share_is_left_as_written() -> None:
    listing = listing_of("Emma", "Emma")
    lend = Toolbox.from_object(Shelf()).get("lend_book")
    assert resolved_ids(lend, {"book_id": "emma"}, [listing]) == {"book_id": "emma"}
    assert resolved_ids(lend, {"book_id": "bk-2"}, [listing]) == {"book_id": "bk-2"}


def test_a_lookup_lists_everything_its_optional_filters_left_at_their_defaults() -> None:
    """Asked to fill a listing's tag, Qwen 1.5B wrote the action's words and listed nothing."""

    class Tagged(Shelf):
        __freyr_reads__ = ("find_books",)

        def find_books(self, genre: str = "") -> list[dict[str, Any]]:
            """List the books (id, title), all or those of a genre.

            Args:
                genre: only books of this genre; empty for all.
            """
            return [] if genre else self.list_books()

    shelf = Tagged()
    prog, engine = shelf_program(shelf)
    toolbox = Toolbox.from_object(shelf, methods=["find_books", "lend_book"])
    result = prog(message="Lend out Emma", toolbox=toolbox).result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("find_books", {}),
        ("lend_book", {"book_id": "bk-9"}),
    ]
    assert engine.roles_called().count("parameters") == 2  # the action twice, the read never


def test_a_name_that_is_part_of_one_title_takes_its_id() -> None:
    listing = listing_of("Tax documents 2026", "Tax")
    lend = Toolbox.from_object(Shelf()).get("lend_book")
    assert resolved_ids(lend, {"book_id": "tax-documents"}, [listing]) == {"book_id": "bk-1"}
    # "tax" is a word of both titles: it names neither
    assert resolved_ids(lend, {"book_id": "tax"}, [listing]) == {"book_id": "tax"}


def test_an_action_planned_beside_a_read_gets_the_margin_of_several_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checked alone, the action met the stricter margin of a one-tool plan."""
    from freyr_dspy.strategies import _freyr

    seen: list[tuple[list[str], float | None]] = []

    def verdicts(
        run: Any, role: Any, tools: list[str], *, margin: float | None = None, **_: Any
    ) -> Any:
        seen.append((tools, margin))
        return dict.fromkeys(tools, True)

    monkeypatch.setattr(_freyr, "scored_verdicts", verdicts)

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["list_books", "lend_book"] if "which" in call.inputs["message"]
                    else ["lend_book"]}  # fmt: skip
        if call.role == "parameters":
            return {"arguments": {"book_id": "bk-9"}}
        return {"reply": "Done."}

    settings = {"abstain_margin": 0.9, "confirm_margin": 0.2}
    strategy = make_strategy("freyr", abstain=True, scored_confirm=True, **settings)
    prog = FreyrProgram(toolbox=Toolbox.from_object(Shelf()), strategy=strategy)
    prog.set_lm(dspy.LM("fake/margins", engine=FunctionLM(answer), cache=False))
    prog(message="List my books and lend bk-9, which is Emma")
    prog(message="Lend bk-9")
    assert seen == [(["lend_book"], 0.2), (["lend_book"], 0.9)]


def test_an_id_written_inside_other_words_is_cut_to_the_id_a_result_gave() -> None:
    def pin_note(note_id: str) -> str:
        """Pin a note."""
        return f"{note_id} pinned"

    pin = Tool.from_function(pin_note)
    created = CallRecord(
        tool="create_note", arguments={"title": "Wedding speech"},
        outcome=Outcome(ok=True, message="created note-4"),
    )  # fmt: skip
    for written in ("created note-4", "created_note-4"):
        assert resolved_ids(pin, {"note_id": written}, [created]) == {"note_id": "note-4"}
    # an id as written, or a value with no returned id in it, is left alone
    assert resolved_ids(pin, {"note_id": "note-4"}, [created]) == {"note_id": "note-4"}
    assert resolved_ids(pin, {"note_id": "note-7"}, [created]) == {"note_id": "note-7"}

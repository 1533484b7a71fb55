"""``freyr chat``: talk to a program turn by turn; the state and the conversation carry over.

Lines are read from stdin, so it works at a terminal and in a pipe
(``freyr chat --json < messages.txt``). Commands: ``/state`` shows the
state, ``/reset`` starts over, ``/quit`` (or end of input) leaves.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from freyr_dspy._files import write_text_atomic
from freyr_dspy.cli._common import json_option
from freyr_dspy.cli._run import load_state_file, make_program, program_options, render_result
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result

__all__ = ["ChatSession", "chat"]

PROMPT = "you> "


@click.command()
@program_options
@click.option(
    "--save-state",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the state here after every turn (atomically).",
)
@json_option
def chat(state_file: Path | None, save_state: Path | None, as_json: bool, **choice: Any) -> None:
    """Talk to a program; state and conversation carry over between turns."""
    program = make_program(**choice)
    session = ChatSession(program, load_state_file(program, state_file) if state_file else None)
    for line in _lines(interactive=sys.stdin.isatty() and not as_json):
        command = line.strip()
        if not command:
            continue
        if command in ("/quit", "/exit"):
            break
        if command == "/state":
            indent = None if as_json else 2  # --json keeps one JSON document per line
            click.echo(json.dumps(session.state_json(), indent=indent, ensure_ascii=False))
        elif command == "/reset":
            session.reset()
            click.echo("(state and conversation reset)", err=True)
        else:
            result = session.send(command)
            if save_state is not None:
                write_text_atomic(save_state, json.dumps(session.state_json(), indent=2) + "\n")
            if as_json:
                click.echo(json.dumps(result.to_json_dict(), ensure_ascii=False, default=str))
            else:
                render_result(result)


class ChatSession:
    """One conversation with a program: each turn sees the earlier turns and the latest state."""

    def __init__(self, program: FreyrProgram, state: Any = None) -> None:
        self.program = program
        self._initial = state
        self.reset()

    def reset(self) -> None:
        """Forget the conversation and go back to the starting state."""
        self.state = self.program.coerce_state(self._initial)
        self.turns: list[dict[str, str]] = []

    def send(self, message: str) -> Result:
        """Run one turn; keep its new state (unchanged when every call failed)."""
        result: Result = self.program(
            message=message, conversation=self.turns, state=self.state
        ).result
        self.state = result.state
        self.turns += [
            {"role": "user", "content": message},
            {"role": "assistant", "content": result.reply},
        ]
        return result

    def state_json(self) -> Any:
        """The current state as JSON data."""
        dump = getattr(self.state, "model_dump", None)
        return dump(mode="json") if dump is not None else self.state


def _lines(interactive: bool) -> Iterator[str]:
    """Lines from stdin, with a prompt at a terminal; stops at end of input."""
    while True:
        try:
            line = input(PROMPT) if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and line == "":
            return
        yield line

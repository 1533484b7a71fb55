"""``todo``: a small example domain (a to-do list) used by the README, the CLI and the tests.

It exercises every tool feature: typed and optional parameters, coercion, libraries for
gating, a state that tools change, and tools that fail with a message the model can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from freyr_dspy.domains._base import Domain
from freyr_dspy.tools import Tool, Toolbox

__all__ = ["TODO", "Task", "TodoState", "make_todo_toolbox"]


class Task(BaseModel):
    """One to-do item."""

    title: str
    priority: int = 1
    done: bool = False


class TodoState(BaseModel):
    """The whole to-do list."""

    tasks: list[Task] = Field(default_factory=list)


def _find(state: TodoState, title: str) -> Task:
    for task in state.tasks:
        if task.title.lower() == title.lower():
            return task
    known = ", ".join(t.title for t in state.tasks) or "none"
    raise ValueError(f"no task titled {title!r}; existing tasks: {known}")


def add_task(title: str, state: TodoState, priority: int = 1) -> str:
    """Add a new task to the to-do list.

    Args:
        title: short title of the task, unique in the list.
        priority: 1 (low) to 5 (urgent).
        state: the to-do list (a copy, kept only when the call succeeds).
    """
    if not title.strip():
        raise ValueError("title must not be empty")
    if not 1 <= priority <= 5:
        raise ValueError(f"priority must be between 1 and 5, got {priority}")
    if any(t.title.lower() == title.lower() for t in state.tasks):
        raise ValueError(f"a task titled {title!r} already exists")
    state.tasks.append(Task(title=title, priority=priority))
    return f"Added task {title!r} with priority {priority}."


def complete_task(title: str, state: TodoState) -> str:
    """Mark an existing task as done.

    Args:
        title: title of the task to mark as done.
        state: the to-do list (a copy, kept only when the call succeeds).
    """
    _find(state, title).done = True
    return f"Marked {title!r} as done."


def remove_task(title: str, state: TodoState) -> str:
    """Delete a task from the list.

    Args:
        title: title of the task to delete.
        state: the to-do list (a copy, kept only when the call succeeds).
    """
    state.tasks.remove(_find(state, title))
    return f"Removed {title!r}."


def list_tasks(state: TodoState, status: Literal["all", "open", "done"] = "all") -> str:
    """List the tasks, optionally only the open or the done ones.

    Args:
        status: which tasks to list: all, open or done.
        state: the to-do list (a copy, kept only when the call succeeds).
    """
    chosen = [t for t in state.tasks if status == "all" or t.done == (status == "done")]
    return "; ".join(f"{t.title} (p{t.priority}{', done' if t.done else ''})" for t in chosen) or (
        "No tasks."
    )


def convert_minutes(minutes: int) -> str:
    """Convert a duration in minutes to hours and minutes.

    Args:
        minutes: the duration in minutes.
    """
    return f"{minutes // 60} h {minutes % 60} min"


def make_todo_toolbox() -> Toolbox:
    """Build the example toolbox (two libraries: ``tasks`` and ``time``)."""
    tasks: list[Callable[..., object]] = [add_task, complete_task, remove_task, list_tasks]
    return Toolbox(
        [Tool.from_function(f, library="tasks") for f in tasks]
        + [Tool.from_function(convert_minutes, library="time")],
        library_descriptions={"tasks": "manage the to-do list", "time": "time arithmetic"},
    )


def render_todo(state: TodoState) -> str:
    """Render the list the way a person would read it."""
    if not state.tasks:
        return "The to-do list is empty."
    lines = [
        f"- {t.title} (priority {t.priority}{', done' if t.done else ''})" for t in state.tasks
    ]
    return "Tasks:\n" + "\n".join(lines)


TODO = Domain(
    name="todo",
    description="a small to-do list (example domain)",
    make_toolbox=make_todo_toolbox,
    initial_state=TodoState,
    renderers={"text": render_todo},
    load_state=TodoState.model_validate,
    example_message="Add a task called buy milk with priority 2.",
)

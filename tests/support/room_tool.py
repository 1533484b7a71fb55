"""A LLMaker-like tool whose errors name rooms: the subject of the retry tests."""

from __future__ import annotations

from typing import Literal


def create_room(name: str, room_from: str, direction: Literal["north", "south", "east"]) -> str:
    """Add a room next to an existing one.

    Args:
        name: the new room's name.
        room_from: the existing room it connects to.
        direction: side of room_from where the new room goes.
    """
    return name

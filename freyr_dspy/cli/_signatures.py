"""``freyr signatures dump``: write ``signatures/<role>.json`` from the role code."""

from __future__ import annotations

from pathlib import Path

import click

from freyr_dspy.cli._common import make_settings
from freyr_dspy.roles import write_signature_dumps

__all__ = ["signatures"]


@click.group()
def signatures() -> None:
    """Role signatures as reviewable data."""


@signatures.command("dump")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder to write (default: the project's signatures/).",
)
def dump(out: Path | None) -> None:
    """Write one JSON dump per role."""
    directory = out or make_settings().signatures_dir
    for path in write_signature_dumps(directory):
        click.echo(str(path))

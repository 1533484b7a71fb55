"""``freyr label``: a teacher model labels the examples that have no ``calls``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from freyr_dspy.cli._common import make_settings, option_group, progress_bar
from freyr_dspy.cli._dataset import open_tools, tools_options

__all__ = ["teacher_program"]


#: The examples to label, the teacher that labels them, and where the rows go.
_label_options = option_group(
    click.option(
        "--examples",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        required=True,
        help="JSONL examples; rows without calls are labelled.",
    ),
    click.option("--teacher", required=True, help="Model id that labels (e.g. a larger model)."),
    click.option("--strategy", default=None, help="The teacher's strategy (default: its preset)."),
    click.option("--api-base", default=None, help="Server URL of the teacher's model."),
    click.option(
        "--out",
        type=click.Path(path_type=Path, dir_okay=False),
        required=True,
        help="Where to write every kept row (labelled ones with their calls).",
    ),
)


@click.command("label")
@tools_options
@_label_options
def command(
    examples: Path,
    teacher: str,
    strategy: str,
    api_base: str | None,
    out: Path,
    **tools: Any,
) -> None:
    """Label rows without calls with the calls a teacher model makes; review the output.

    The teacher decodes greedily; a row whose teacher call the tools refused is dropped (and
    named on stderr), never guessed.
    """
    from freyr_dspy._files import write_text_atomic
    from freyr_dspy.datasets import label_rows, read_rows

    # NOTE: by name: click orders keyword arguments as they were given on the command line
    with open_tools(tools["tools_file"], tools["mcp"], tools["tools_module"]) as boxes:
        rows = read_rows(examples, boxes, labelled_only=False)
        program = teacher_program(teacher, strategy, api_base)
        with progress_bar("label", unit="row") as progress:
            labelling = label_rows(rows, program, progress=progress)
    lines = [json.dumps(row.example.as_json(), ensure_ascii=False) for row in labelling.rows]
    write_text_atomic(out, "\n".join(lines) + "\n")
    for row_id, reason in labelling.dropped:
        click.echo(f"dropped {row_id}: {reason}", err=True)
    click.echo(
        f"labelled {labelling.labelled} row(s), dropped {len(labelling.dropped)}, "
        f"kept {len(labelling.rows)} in all; wrote {out}",
        err=True,
    )


def teacher_program(teacher: str, strategy: str | None, api_base: str | None) -> Any:
    """A plain tool-use program whose roles all use ``teacher``, decoding greedily.

    Each call passes the row's own tools, so the program starts with none.
    """
    from freyr_dspy.program import FreyrProgram
    from freyr_dspy.tools import Toolbox

    return FreyrProgram.for_model(
        teacher,
        toolbox=Toolbox([]),
        strategy=strategy,
        sampling=("temperature=0", "seed=0"),
        api_base=api_base,
        cache=make_settings().cache,
    )

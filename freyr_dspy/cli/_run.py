"""``freyr run``: handle one message with a program and show the reply, calls and usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from freyr_dspy.cli._common import (
    echo_json,
    json_option,
    make_settings,
    model_options,
    option_group,
    read_json_file,
)
from freyr_dspy.cli._dataset import tools_options
from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.program import FreyrProgram, parse_model_specs, parse_sampling_specs
from freyr_dspy.schemas import Result
from freyr_dspy.settings import Settings

__all__ = [
    "load_program",
    "load_state_file",
    "make_program",
    "program_options",
    "render_result",
    "run",
]

#: The options that choose a program: tools, models, domain, strategy, artifact, state.
program_options = option_group(
    tools_options,
    model_options,
    click.option(
        "--domain",
        default=None,
        help="Registered domain (default: todo, or none with --tools: your tools alone).",
    ),
    click.option("--state", "state_file", type=click.Path(path_type=Path), help="JSON state file."),
    click.option(
        "--strategy",
        default=None,
        help="Strategy, switches after + (default: the model's preset, see freyr strategies).",
    ),
    click.option("--max-retries", default=3, show_default=True, type=click.IntRange(0, 10)),
    click.option("--state-view", default=None, help="Which state rendering roles see."),
    click.option(
        "--program",
        "program_path",
        type=click.Path(path_type=Path),
        default=None,
        help="Compiled artifact (compiled/NAME.json); it fixes domain and strategy.",
    ),
    click.option(
        "--allow-changed-tools",
        is_flag=True,
        help="Run a --program with tools that differ from those it was compiled for.",
    ),
)


@click.command()
@click.option("--message", "-m", required=True, help="The user's message.")
@program_options
@json_option
def run(message: str, state_file: Path | None, as_json: bool, **choice: Any) -> None:
    """Run a program on one message (the state file is read, never written)."""
    program = make_program(**choice)
    try:
        state = load_state_file(program, state_file) if state_file else None
        result: Result = program(message=message, state=state).result
    finally:
        program.toolbox.close()  # stops an MCP server the options started
    if as_json:
        echo_json(result.to_json_dict())
    else:
        render_result(result)


def make_program(
    *,
    domain: str | None,
    strategy: str | None,
    max_retries: int,
    state_view: str | None,
    program_path: Path | None,
    model_specs: tuple[str, ...],
    sampling_specs: tuple[str, ...],
    api_base: str | None,
    tools_file: Path | None = None,
    mcp: str | None = None,
    tools_module: str | None = None,
    allow_changed_tools: bool = False,
) -> FreyrProgram:
    """Load a compiled program, or build one for a domain and strategy, with its models.

    Its keywords are the options ``program_options`` adds, so commands pass them on as they are.
    With tools (``--tools``/``--mcp``/``--tools-module``) the program uses them; without a
    ``--domain`` it is a plain tool-use program. An MCP server runs until ``program.toolbox``
    is closed. Without a strategy, the model's preset runs (``default_strategy``).
    """
    from freyr_dspy.program import FreyrProgram

    settings = make_settings()
    toolbox = _one_toolbox(tools_file, mcp, tools_module)
    if program_path is not None:
        return load_program(
            program_path,
            settings,
            model_specs,
            sampling_specs,
            api_base,
            toolbox=toolbox,
            allow_changed_tools=allow_changed_tools,
        )
    return FreyrProgram.for_model(
        toolbox=toolbox,
        domain=domain or (None if toolbox is not None else "todo"),
        strategy=strategy,
        models=model_specs,
        sampling=sampling_specs,
        api_base=api_base,
        max_retries=max_retries,
        state_view=state_view,
        cache=settings.cache,
        default_model=settings.default_model,
    )


def _one_toolbox(tools_file: Path | None, mcp: str | None, tools_module: str | None) -> Any:
    """The tools the options give, or None; a file of several toolboxes is refused."""
    from freyr_dspy.datasets import open_toolboxes

    boxes = open_toolboxes(tools_file, mcp, tools_module)
    if len(boxes) > 1:
        raise ConfigError(
            f"{tools_file} holds several toolboxes ({', '.join(boxes)}); "
            "a program runs with one: give a file with a list of tools"
        )
    return next(iter(boxes.values()), None)


def load_program(
    path: Path,
    settings: Settings,
    model_specs: tuple[str, ...],
    sampling_specs: tuple[str, ...],
    api_base: str | None,
    *,
    toolbox: Any = None,
    allow_changed_tools: bool = False,
) -> FreyrProgram:
    """Load an artifact; ``--model``/``--sampling`` override only the roles they name."""
    from freyr_dspy.artifacts import load

    program = load(
        path, settings=settings, toolbox=toolbox, allow_changed_tools=allow_changed_tools
    )
    models = parse_model_specs(model_specs, program.role_names)
    sampling = parse_sampling_specs(sampling_specs, program.role_names)
    overrides = {
        role: spec.model_copy(
            update={
                k: v
                for k, v in (
                    ("model", models.get(role)),
                    ("sampling", sampling.get(role)),
                    ("api_base", api_base),
                )
                if v is not None
            }
        )
        for role, spec in program.assignment.items()
        if role in models or role in sampling
    }
    program.apply_assignment(overrides, cache=settings.cache)
    return program


def load_state_file(program: FreyrProgram, path: Path) -> Any:
    """Read and validate a state file; a schema mismatch is a one-line ``DataError``."""
    data = read_json_file(path)
    try:
        return program.coerce_state(data)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        detail = " ".join(" ".join(str(exc).splitlines()[:3]).split())
        raise DataError(path, None, f"not a valid {program.domain.name} state: {detail}") from exc


def render_result(result: Result) -> None:
    """Print a result for a person: reply, calls, usage."""
    click.echo(result.reply or "(no reply)")
    for call in result.calls:
        status = "ok" if call.outcome.ok else "error"
        click.echo(
            f"  [{status}] {call.tool}({call.arguments}) x{call.attempts}: {call.outcome.message}",
            err=True,
        )
    if result.failure:
        click.echo(f"  failure: {result.failure}", err=True)
    for role, usage in result.usage.items():
        click.echo(
            f"  {role:<15} calls={usage.lm_calls} in={usage.input_tokens} "
            f"out={usage.output_tokens} {usage.seconds:.2f}s",
            err=True,
        )

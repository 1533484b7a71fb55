"""``freyr serve``: an OpenAI-compatible Chat Completions endpoint over freyr programs.

Each ``--program`` is served under its file stem. Without one, the ``--strategy`` is served
with each bare ``--model ID`` under that id (``ROLE=ID`` specs apply to all of them), or with
the default model. With ``--program``, ``--model``/``--sampling`` change the programs' models,
as in ``freyr run``. docs/serve.md is the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from freyr_dspy.cli._common import make_settings, model_options

if TYPE_CHECKING:
    from freyr_dspy.serve import ServedProgram
    from freyr_dspy.settings import Settings

__all__ = ["served_programs"]

#: Hosts only this machine reaches; elsewhere a server without --api-key gets a warning.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command("serve")
@click.option(
    "--program",
    "program_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Compiled artifact to serve, picked by its file stem. Repeatable.",
)
@click.option(
    "--strategy",
    default=None,
    help="Strategy served with the --model ids (switches after +: freyr+require_stated; "
    "default: each model's preset, see freyr strategies).",
)
@click.option("--max-retries", default=3, show_default=True, type=click.IntRange(0, 10))
@model_options
@click.option(
    "--allow-changed-tools",
    is_flag=True,
    help="Answer requests whose tools differ from those a --program was compiled for.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--max-queue",
    default=16,
    show_default=True,
    type=click.IntRange(min=0),
    help="Requests that may wait while one runs; more are refused with 503.",
)
@click.option(
    "--concurrency",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Requests run at once; above 1 only for programs whose models are remote "
    "(a model server or provider), as an in-process model answers one call at a time.",
)
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a program may run before the request gets 504.",
)
@click.option(
    "--context-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Context window requests are checked against (default: the models' own).",
)
@click.option(
    "--any-model",
    is_flag=True,
    help="Answer every model name with the first program (for clients with a fixed name).",
)
@click.option(
    "--api-key",
    envvar="FREYR_API_KEY",
    default=None,
    help="Require 'Authorization: Bearer KEY' (or set FREYR_API_KEY).",
)
def command(
    host: str,
    port: int,
    max_queue: int,
    concurrency: int,
    timeout: float,
    any_model: bool,
    api_key: str | None,
    **choice: Any,
) -> None:
    """Serve programs over OpenAI's Chat Completions protocol (tools, tool_choice, stream)."""
    from freyr_dspy.serve import ServedPrograms, ServeOptions, create_app, run_server

    served = ServedPrograms(served_programs(make_settings(), **choice), fallback=any_model)
    options = ServeOptions(
        max_queue=max_queue, timeout=timeout, api_key=api_key, concurrency=concurrency
    )
    app = create_app(served, options)
    if host not in LOOPBACK and api_key is None:
        click.echo(f"warning: listening on {host} with no --api-key: anyone can use it", err=True)
    click.echo(f"freyr serve: {', '.join(served.names)} at http://{host}:{port}/v1", err=True)
    run_server(app, host, port)


def served_programs(
    settings: Settings,
    *,
    program_paths: tuple[Path, ...],
    strategy: str | None,
    max_retries: int,
    model_specs: tuple[str, ...],
    sampling_specs: tuple[str, ...],
    api_base: str | None,
    allow_changed_tools: bool = False,
    context_tokens: int | None = None,
) -> list[ServedProgram]:
    """The programs the options name: the artifacts, else the strategy with each model.

    Without a strategy, each model serves its preset (``default_strategy``).
    """
    if program_paths:
        return [
            _artifact(
                path,
                settings,
                (model_specs, sampling_specs, api_base),
                allow_changed_tools,
                context_tokens,
            )
            for path in program_paths
        ]
    from freyr_dspy.program import bare_model_ids, resolve_label

    bare = bare_model_ids(model_specs)
    roles = tuple(spec for spec in model_specs if "=" in spec)
    default_label = resolve_label(strategy, settings.default_model)
    names = bare or ([default_label] if roles else [settings.default_model])
    return [
        _strategy_program(
            name,
            strategy,
            settings,
            model=name if bare else settings.default_model,
            specs=(roles, sampling_specs, api_base),
            max_retries=max_retries,
            context_tokens=context_tokens,
        )
        for name in names
    ]


def _artifact(
    path: Path,
    settings: Settings,
    specs: tuple[tuple[str, ...], tuple[str, ...], str | None],
    allow_changed_tools: bool,
    context_tokens: int | None,
) -> ServedProgram:
    """A compiled program for a user's own tools; requests bring the tools."""
    from freyr_dspy.artifacts import read_artifact
    from freyr_dspy.cli._run import load_program
    from freyr_dspy.domains import PLAIN_DOMAIN_NAME
    from freyr_dspy.errors import ConfigError
    from freyr_dspy.serve import ServedProgram
    from freyr_dspy.tools import Toolbox

    meta, _ = read_artifact(path, settings=settings)
    if meta.program.domain != PLAIN_DOMAIN_NAME:
        raise ConfigError(
            f"{path} is a program of the {meta.program.domain!r} domain; freyr serve serves "
            "programs compiled for your own tools (freyr compile --tools ... --examples ...)"
        )
    # NOTE: loaded without tools: each request brings its own; a program compiled for one
    # toolbox has its requests' tools checked against the recorded fingerprint instead.
    program = load_program(
        path, settings, *specs, toolbox=Toolbox([]), allow_changed_tools=meta.toolbox is not None
    )
    return ServedProgram(
        path.stem,
        program,
        source=str(path),
        aliases=(str(path),),
        context_tokens=context_tokens,
        compiled_for=meta.toolbox,
        allow_changed_tools=allow_changed_tools,
    )


def _strategy_program(
    name: str,
    strategy: str | None,
    settings: Settings,
    *,
    model: str,
    specs: tuple[tuple[str, ...], tuple[str, ...], str | None],
    max_retries: int,
    context_tokens: int | None,
) -> ServedProgram:
    """The strategy (default: ``model``'s preset) with ``model`` for the roles not named."""
    from freyr_dspy.program import FreyrProgram
    from freyr_dspy.serve import ServedProgram
    from freyr_dspy.strategies import strategy_label
    from freyr_dspy.tools import Toolbox

    role_specs, sampling_specs, api_base = specs
    program = FreyrProgram.for_model(
        model,
        toolbox=Toolbox([]),
        strategy=strategy,
        models=role_specs,
        sampling=sampling_specs,
        api_base=api_base,
        max_retries=max_retries,
        cache=settings.cache,
    )
    source = f"strategy {strategy_label(program.strategy)}"
    return ServedProgram(name, program, source=source, context_tokens=context_tokens)

"""The ``freyr`` command line: a click group of thin commands.

``main`` maps ``ConfigError``/``DataError`` to exit 2 and other ``FreyrError`` to exit 1 with
a one-line message; ``--debug`` shows the traceback. Ctrl-C and SIGTERM stop a command the same
way (what is checkpointed is kept; exit 130 and 143). Only this package configures logging.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

import click

from freyr_dspy.errors import ConfigError, DataError, FreyrError, one_line

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.version_option(package_name="freyr-dspy")
@click.pass_context
def cli(ctx: click.Context, debug: bool, verbose: int, quiet: bool) -> None:
    """freyr: make small LLMs use tools reliably and cheaply."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    _configure_logging(verbose, quiet)
    _use_model_cache()


def _use_model_cache() -> None:
    """Assemble embedded models where the settings say (``FREYR_MODEL_CACHE``)."""
    from freyr_dspy.backends import use_model_cache
    from freyr_dspy.cli._common import make_settings

    use_model_cache(make_settings().model_cache_dir)


def _configure_logging(verbose: int, quiet: bool) -> None:
    levels = [logging.WARNING, logging.INFO, logging.DEBUG]
    level = logging.ERROR if quiet else levels[min(verbose, 2)]
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("freyr_dspy").setLevel(level)
    for noisy in ("dspy", "LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING) if verbose < 2 else level)
    try:
        import optuna

        optuna_level = optuna.logging.WARNING if verbose == 0 else optuna.logging.INFO
        optuna.logging.set_verbosity(optuna_level)
    except ImportError:  # pragma: no cover - optuna is a dependency
        pass


def _register_commands() -> None:
    from freyr_dspy.cli import _chat, _models, _run, _signatures

    cli.add_command(_run.run)
    cli.add_command(_chat.chat)
    cli.add_command(_models.models)
    cli.add_command(_signatures.signatures)
    optional_commands = (
        "eval_cmd",
        "compile_cmd",
        "search_cmd",
        "label_cmd",
        "strategies_cmd",
        "serve_cmd",
    )
    for optional in optional_commands:
        try:
            module = __import__(f"freyr_dspy.cli._{optional}", fromlist=["command"])
        except ModuleNotFoundError as exc:
            if exc.name != f"freyr_dspy.cli._{optional}":
                raise
            continue
        cli.add_command(module.command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    # NOTE: set before litellm is imported: it would otherwise fetch its model map online.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    _register_commands()
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        with _sigterm_interrupts():
            cli.main(args=args, prog_name="freyr", standalone_mode=False)
    except Terminated:
        click.echo("Terminated.", err=True)
        return 143
    except click.exceptions.Abort as exc:  # click turns an interrupt into Abort
        if isinstance(exc.__cause__, Terminated):
            click.echo("Terminated.", err=True)
            return 143
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (ConfigError, DataError) as exc:
        return _fail(exc, 2, debug)
    except FreyrError as exc:
        return _fail(exc, 1, debug)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: the command stops as if interrupted."""


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Turn SIGTERM into ``Terminated`` while a command runs (main thread only).

    A run started in the background from a script ignores SIGINT (POSIX shells do that for
    background jobs), so ``kill`` is how one stops it. Without this handler SIGTERM ends the
    process on the spot: a search's running trial stays RUNNING in its storage, and nothing
    says why the command stopped.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fail(exc: Exception, code: int, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exception(exc)
    click.echo(f"error: {one_line(exc, limit=None)}", err=True)
    return code

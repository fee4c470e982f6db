"""The ``podplan`` command line: thin click commands over ``generator.pipeline``.

User errors (``PodplanError``) print one screen to stderr and exit 2; a bug prints one line
and exits 1 (the traceback only with ``--verbose``); see ``generator.console`` for the
conventions. Every command reads its spec through ``pipeline.load_checked``, so all of them
accept and reject the same specs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from generator import __version__, console, pipeline
from generator.errors import PodplanError

SPEC = click.argument("spec", type=click.Path(dir_okay=False, path_type=str))
F = TypeVar("F", bound=Callable[..., Any])


def _level(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    console.set_level(**{str(param.name): value})


def verbosity(f: F) -> F:
    """``-q/--quiet`` and ``-v/--verbose``, accepted before or after the command name."""
    quiet = click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=_level,
                         help="Print only results and errors.")
    verbose = click.option("-v", "--verbose", is_flag=True, expose_value=False,
                           callback=_level,
                           help="Print more, and the traceback of an internal error.")
    return quiet(verbose(f))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="podplan")
@verbosity
def cli() -> None:
    """Size an LLM GPU cluster from a workload spec and generate its BOM, Ansible and Pulumi.

    Exit codes: 0 ok, 2 bad input (the message names file, line and field), 1 a bug in
    podplan. Shell completion: eval "$(_PODPLAN_COMPLETE=bash_source podplan)".
    """


def lock_options(f: F) -> F:
    """``--out DIR`` (whose ``reports/<name>/plan.lock.yaml`` the plan keeps) and ``--fresh``."""
    out = click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path(),
                       show_default=True,
                       help="Directory to write reports/, inventories/ and stacks/ under "
                            "(its plan lock, reports/<name>/plan.lock.yaml, is kept).")
    fresh = click.option("--fresh", is_flag=True,
                         help="Ignore the plan lock: number every name, address, rack slot "
                              "and cable afresh.")
    return out(fresh(f))


@cli.command()
@verbosity
def schema() -> None:
    """Print the JSON Schema of the spec format."""
    from generator.spec.limits import annotate_schema
    from generator.spec.models import Spec

    doc = annotate_schema(Spec.model_json_schema())
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


@cli.command()
@SPEC
@lock_options
@verbosity
def validate(spec: str, out_dir: Path, fresh: bool) -> None:
    """Check SPEC as plan would (shape, values, catalog, sizing, layout); write nothing."""
    loaded = pipeline.load_checked(spec)
    out = pipeline.outputs(loaded, out_dir=out_dir, fresh=fresh)
    n = len(loaded.spec.workloads)
    console.info(f"ok: {spec}: '{loaded.spec.name}', {n} workload{'s' if n != 1 else ''}, "
                 f"{len(out.files)} files to write")


@cli.command()
@SPEC
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable result.")
@verbosity
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
@lock_options
@verbosity
def bom(spec: str, fmt: str, out_dir: Path, fresh: bool) -> None:
    """Print the bill of materials for SPEC (of the plan podplan plan would write)."""
    from generator.bom import format_bom

    loaded = pipeline.load_checked(spec)
    cluster = pipeline.plan(loaded, out_dir=out_dir, fresh=fresh)
    click.echo(format_bom(pipeline.bill_of_materials(loaded, cluster), fmt), nl=False)


@cli.command()
@SPEC
@lock_options
@click.option("--dry-run", is_flag=True, help="List the files that would be written.")
@verbosity
def plan(spec: str, out_dir: Path, fresh: bool, dry_run: bool) -> None:
    """Plan the cluster for SPEC and write reports, inventory and stack config.

    Lists every file written (new or changed) and removed on stdout; --quiet lists nothing,
    --verbose lists the unchanged files too. The plan keeps reports/<name>/plan.lock.yaml
    under --out: devices already planned keep their names, addresses, rack slots and cables
    (--fresh numbers everything afresh); what changed against it is printed first.
    """
    from generator.emit.stack_secrets import merge_with_existing
    from generator.render.write import cannot_write, write_tree

    out = pipeline.outputs(pipeline.load_checked(spec), out_dir=out_dir, fresh=fresh)
    for line in out.messages:  # identity changes against the plan lock
        console.info(line)
    if dry_run:
        for f in out.files:
            click.echo(f"would write {out_dir / f.path} ({len(f.content)} bytes)")
        return
    try:
        files = merge_with_existing(out_dir, out.files)
    except OSError as exc:
        raise cannot_write(exc, out_dir) from None
    except UnicodeDecodeError:
        raise PodplanError(f"cannot update a stack file under {out_dir}: not UTF-8") from None
    done = write_tree(out_dir, files, out.owned_dirs)
    for path in done.written:
        console.info(f"wrote {out_dir / path}")
    for path in done.unchanged:
        console.detail(f"unchanged {out_dir / path}")
    for path in done.removed:
        console.info(f"removed {out_dir / path}")
    console.info(f"{len(done.written)} written, {len(done.unchanged)} unchanged, "
                 f"{len(done.removed)} removed under {out_dir}")


@cli.command()
@SPEC
@click.option("--gpus", help="GPU counts: LO:HI (doubling from LO), LO:HI:STEP or 64,128,...")
@click.option("--gpu", help="GPU types to compare, comma-separated catalog ids.")
@click.option("--cloud", help="Clouds to price, comma-separated (default: cheapest of the spec's).")
@click.option("--deadline-hours", type=float, help="Deadline (default: the spec's workloads').")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "html"]),
              default="table", show_default=True, help="Output format.")
@verbosity
def sweep(spec: str, gpus: str | None, gpu: str | None, cloud: str | None,
          deadline_hours: float | None, fmt: str) -> None:
    """Plan SPEC over cluster sizes, GPU types and clouds; mark the cheapest point on time."""
    from generator.sweep.command import sweep_text

    click.echo(sweep_text(spec, gpus, gpu, cloud, deadline_hours, fmt), nl=False)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: exits 0 ok, 2 user error, 1 internal error (a bug)."""
    sys.exit(console.run(cli, argv))

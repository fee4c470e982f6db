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
from typing import TYPE_CHECKING, Any, TypeVar

import click

from generator import __version__, console

if TYPE_CHECKING:
    from generator.pipeline import Outputs
    from generator.render.update import Update

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
    from generator import pipeline

    loaded = pipeline.load_checked(spec)
    out = pipeline.outputs(loaded, out_dir=out_dir, fresh=fresh)
    n = len(loaded.spec.workloads)
    for line in out.warnings:
        console.warn(line)
    console.info(f"ok: {spec}: '{loaded.spec.name}', {n} workload{'s' if n != 1 else ''}, "
                 f"{len(out.files)} files to write")


@cli.command()
@SPEC
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable result.")
@verbosity
def size(spec: str, as_json: bool) -> None:
    """Size the workloads in SPEC: layout, memory, time and GPU count."""
    from generator import pipeline
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
    from generator import pipeline
    from generator.bom import format_bom

    loaded = pipeline.load_checked(spec)
    cluster = pipeline.plan(loaded, out_dir=out_dir, fresh=fresh)
    click.echo(format_bom(pipeline.bill_of_materials(loaded, cluster), fmt), nl=False)


@cli.command()
@SPEC
@lock_options
@click.option("--dry-run", is_flag=True, help="List the files that would be written.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Write nothing; print what would change: files, devices, identity moves "
                   "(addresses, rack slots, cables) and the BOM.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 0 if the output tree is up to date, 1 if "
                   "regenerating would change it.")
@click.option("--force", is_flag=True,
              help="Overwrite or remove generated files (and stack keys) edited by hand.")
@verbosity
def plan(spec: str, out_dir: Path, fresh: bool, dry_run: bool, show_diff: bool, check: bool,
         force: bool) -> int:
    """Plan the cluster for SPEC and write reports, inventory and stack config.

    podplan owns exactly the files it writes (listed in reports/<name>/manifest.json); every
    other file under --out is yours and is never changed. A generated file edited by hand is
    not overwritten without --force. Lists every file written (new or changed) and removed;
    --quiet lists nothing, --verbose lists the unchanged files too. With --check, exit code 1
    means "regenerating would change the tree" (2 stays a user error). The plan keeps
    reports/<name>/plan.lock.yaml under --out: devices already planned keep their names,
    addresses, rack slots and cables (--fresh numbers everything afresh); what changed
    against it is printed before the files.
    """
    from generator import pipeline
    from generator.render.update import apply, prepare
    from generator.render.write import recover

    out = pipeline.outputs(pipeline.load_checked(spec), out_dir=out_dir, fresh=fresh)
    for line in out.warnings:
        console.warn(line)
    if dry_run:
        for line in out.messages:  # identity changes against the plan lock
            console.info(line)
        for f in out.files:
            click.echo(f"would write {out_dir / f.path} ({len(f.content)} bytes)")
        return 0
    if show_diff or check:
        return _preview(out_dir, out, show_diff, check, force)
    for line in recover(out_dir):
        console.info(line)
    update = prepare(out_dir, out.files, out.manifest, force)
    apply(update)
    for line in out.messages:  # identity changes against the plan lock, once written
        console.info(line)
    _report_written(update)
    return 0


def _preview(out_dir: Path, out: Outputs, show_diff: bool, check: bool,
             force: bool) -> int:
    from generator.render import preview
    from generator.render.update import prepare

    update = prepare(out_dir, out.files, out.manifest, force)
    limit = None if console.LEVEL.verbose else 40
    if show_diff:
        if out.messages:  # what plan prints after writing: the changes against the lock
            click.echo("notes:")
            for line in out.messages:
                click.echo(f"  {line}")
        for line in [*preview.file_lines(update, limit),
                     *preview.plan_lines(out_dir, out.files, out.name, limit)]:
            click.echo(line)
    elif check:
        for line in preview.check_lines(update):
            console.info(line)
    return 1 if check and not update.up_to_date else 0


def _report_written(update: Update) -> None:
    out_dir = update.out_dir
    for r in update.refusals:  # only with --force: say what was overwritten
        console.info(f"forced {out_dir / r.path}: {r.reason}")
    for path in sorted(update.added + update.changed):
        console.info(f"wrote {out_dir / path}")
    for path in update.unchanged:
        console.detail(f"unchanged {out_dir / path}")
    for path in update.removed:
        console.info(f"removed {out_dir / path}")
    for note in update.notes:
        console.info(f"note: {note}")
    console.info(f"{len(update.added) + len(update.changed)} written, "
                 f"{len(update.unchanged)} unchanged, {len(update.removed)} removed under "
                 f"{out_dir}")


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
    """Plan SPEC over cluster sizes, GPU types and clouds; mark the cheapest point on time.

    A spec that only serves is compared over the GPU types its server takes, each sized by
    its latency SLOs: GPUs, TPOT/TTFT, $ per million output tokens and capex.
    """
    from generator.sweep.command import sweep_text

    click.echo(sweep_text(spec, gpus, gpu, cloud, deadline_hours, fmt), nl=False)


@cli.command()
@SPEC
@click.argument("results", required=False,
                type=click.Path(file_okay=False, path_type=Path))
@click.option("--expected", is_flag=True,
              help="Print every rung's expected value, tolerance and source; read no results.")
@click.option("--json", "as_json", is_flag=True, help="With --expected: a JSON list.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path(),
              show_default=True, help="Directory to write reports/<name>/acceptance/ under.")
@click.option("--drain", is_flag=True,
              help="Set the nodes a fault is pinned on to DRAIN, with the reason (scontrol).")
@click.option("--scontrol", default="scontrol", show_default=True,
              help="Command that runs scontrol, e.g. 'ssh login01 scontrol'.")
@verbosity
def accept(spec: str, results: Path | None, expected: bool, as_json: bool, out_dir: Path,
           drain: bool, scontrol: str) -> int:
    """Compare an acceptance-ladder run (RESULTS) with what SPEC's plan should measure.

    Writes reports/<name>/acceptance/<run id>.md and .json (the run id comes from the
    results, so the same results give the same report) and names the nodes, rails and links
    that fall short. Exit code 1: something falls short (2 stays a user error).
    """
    from generator.acceptance import command

    if expected:
        if results is not None or drain:
            raise click.UsageError("--expected prints the plan's values: give it no RESULTS "
                                   "and no --drain")
        click.echo(command.expected_text(spec, as_json), nl=False)
        return 0
    if as_json:
        raise click.UsageError("--json goes with --expected (the report is written as JSON "
                               "and Markdown anyway)")
    if results is None:
        raise click.UsageError("give RESULTS (a run directory of the ladder) or --expected")
    done = command.accept(spec, results, out_dir, drain, scontrol)
    for line in done.lines:
        click.echo(line)
    return done.code


@cli.command()
@click.option("--from", "report", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="An acceptance report: reports/<name>/acceptance/<run id>.json.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Calibration file to write [default: calibration/<name>.yaml].")
@click.option("--allow-failed", is_flag=True,
              help="Calibrate on a run that fell short (its faults go into every estimate).")
@verbosity
def calibrate(report: Path, out_file: Path | None, allow_failed: bool) -> None:
    """Write a site calibration from an acceptance report, for the spec to use."""
    from generator.acceptance import command

    for line in command.calibrate(report, out_file, allow_failed):
        click.echo(line)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: exits 0 ok, 2 user error, 1 internal error (a bug).

    The command runs with the cycle collector paused (its objects, imports included, are
    acyclic or live to the end; collections only cost time) and skips the collections of
    the interpreter's exit (``gcpause``).
    """
    from generator.gcpause import gc_paused, spare_exit_collection

    spare_exit_collection()
    with gc_paused():
        code = console.run(cli, argv)
    sys.exit(code)

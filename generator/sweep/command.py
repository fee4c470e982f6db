"""What ``podplan sweep`` does between reading its options and printing: the CLI stays thin."""

from __future__ import annotations

import shlex

from generator import pipeline
from generator.catalog.load import default_catalog
from generator.sweep.formats import command, to_csv, to_json, to_table
from generator.sweep.grid import parse_grid
from generator.sweep.html import to_html
from generator.sweep.run import check_sweepable, run_sweep


def sweep_text(spec_file: str, gpus: str | None, gpu: str | None, cloud: str | None,
               deadline_hours: float | None, fmt: str) -> str:
    """Load and check the spec, plan every point, and format the result."""
    catalog = default_catalog()
    loaded = pipeline.load_checked(spec_file, catalog)
    check_sweepable(loaded)
    grid = parse_grid(loaded.spec, catalog, gpus, gpu, cloud, deadline_hours)
    result = run_sweep(loaded, grid, catalog)
    options = [("--gpus", gpus), ("--gpu", gpu), ("--cloud", cloud),
               ("--deadline-hours", None if deadline_hours is None else f"{deadline_hours:g}"),
               ("--format", fmt)]
    argv = "".join(f" {k} {shlex.quote(v)}" for k, v in options if v is not None)
    cmd = command(result, argv)
    if fmt == "csv":
        return to_csv(result, cmd)
    if fmt == "json":
        return to_json(result, cmd)
    if fmt == "html":
        return to_html(result, cmd)
    return to_table(result)

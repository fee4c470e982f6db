"""The ``accept`` and ``calibrate`` commands, behind the thin click layer in ``cli.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from generator import console
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.render.files import OutFile
from generator.sizing.acceptance import AcceptanceModel, Expectation, build_model

if TYPE_CHECKING:
    from generator.acceptance.compare import Comparison

RULE = {"at_least": ">=", "at_most": "<=", "equal": "="}


def model_for(spec_file: str) -> AcceptanceModel:
    """The acceptance model of a spec, on the node count its plan sizes."""
    from generator import pipeline

    loaded = pipeline.load_checked(spec_file)
    sized = pipeline.size(loaded)
    with pipeline.located(loaded):
        return build_model(loaded.spec, default_catalog(), sized.nodes)


def _row(e: Expectation) -> list[str]:
    return [e.test, e.scope, e.metric, f"{e.expected:,.4g} {e.unit}",
            f"{RULE[e.pass_if]} {e.limit:,.4g} ({e.tolerance_pct:g} %)", e.source]


def expected_text(spec_file: str, as_json: bool) -> str:
    """``accept SPEC --expected``: every rung's expected value, tolerance and source."""
    model = model_for(spec_file)
    rows = model.listing()
    if as_json:
        return json.dumps([e.to_json() for e in rows], indent=2) + "\n"
    table = [["test", "scope", "metric", "expected", "passes if", "source"]] + \
        [_row(e) for e in rows]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)) + "  " + r[5]
             for r in table]
    floor = model.hbm().limit * 1000
    lines += ["", f"Planned: {model.nodes} GPU nodes of {model.node.gpus} GPUs, "
              f"{model.node.nics} x {model.node.nic_gbps:g} Gb/s rails. Ladder setting that "
              "makes DCGM judge memory bandwidth against this plan:",
              f"  slurm_acceptance_hbm_floor_mbps: {floor:.0f}"]
    return "\n".join(lines) + "\n"


UNMEASURED_SHOWN = 10
"""Checks without a measurement printed by ``accept``; the report lists them all."""


def _unmeasured(cmp: Comparison) -> list[str]:
    """Checks with nothing to compare (an unreadable output, a missing test) that no
    shortfall already names: each one fails the run, so each one is said."""
    named = {s.subject for s in cmp.shortfalls}
    errors = [c for c in cmp.checks if c.status == "error" and c.subject not in named]
    lines = [f"  no measurement: {c.rung}: {c.subject}: {c.detail}"
             for c in errors[:UNMEASURED_SHOWN]]
    if len(errors) > UNMEASURED_SHOWN:
        lines.append(f"  ... and {len(errors) - UNMEASURED_SHOWN} more checks without a "
                     "measurement (see the report)")
    return lines


@dataclass
class Accepted:
    """What ``accept`` did: exit code and the lines to print."""

    code: int
    lines: list[str] = field(default_factory=list)


def accept(spec_file: str, results: Path, out_dir: Path, drain: bool,
           scontrol: str) -> Accepted:
    """Compare a run with the plan, write the report, drain on request."""
    from generator.acceptance import drain as drainer
    from generator.acceptance.compare import compare
    from generator.acceptance.report import render
    from generator.acceptance.results import read_run
    from generator.render.write import write_tree

    model = model_for(spec_file)
    run = read_run(results)
    if run.cluster and run.cluster != model.cluster:
        raise PodplanError(f"{results} holds a run of cluster '{run.cluster}', the spec "
                           f"plans '{model.cluster}'")
    cmp = compare(run, model)
    json_text, md = render(cmp, default_catalog())
    base = f"reports/{model.cluster}/acceptance/{run.id}"
    write_tree(out_dir, [OutFile(f"{base}.json", json_text), OutFile(f"{base}.md", md)])
    failed = len(cmp.failed)
    out = Accepted(0 if cmp.verdict == "pass" else 1, [
        f"acceptance of {model.cluster}, run {run.id}: {cmp.verdict.upper()} "
        f"({len(cmp.shortfalls)} shortfall{'' if len(cmp.shortfalls) == 1 else 's'}; "
        f"{len(cmp.checks) - failed} of {len(cmp.checks)} "
        "checks passed)"])
    out.lines += [f"  {s.rung}: {s.subject}: {s.what}" for s in cmp.shortfalls]
    out.lines += _unmeasured(cmp)
    out.lines += [f"  not measured: {k} ({v})" for k, v in cmp.not_measured.items()]
    console.info(f"wrote {out_dir / base}.md")
    console.info(f"wrote {out_dir / base}.json")
    if drain:
        out.lines += drainer.drain(cmp.drain(), scontrol) or ["nothing to drain"]
    return out


def calibrate(report: Path, out: Path | None, allow_failed: bool) -> list[str]:
    """Write the site calibration file for one acceptance report."""
    from generator.acceptance.calibrate import calibration_text
    from generator.render.write import write_tree

    text, cluster, found = calibration_text(report, allow_failed)
    target = out or Path("calibration") / f"{cluster}.yaml"
    write_tree(target.parent, [OutFile(target.name, text)])
    factors = ", ".join(f"{k} x{v:g}" for k, v in sorted(found.items()))
    return [f"wrote {target}: {factors}",
            f"use it: add 'site_calibration: {target}' to the spec (the path is relative to "
            "the spec file; adjust it if the spec lives elsewhere)"]

"""The pipeline, end to end: spec file -> checked spec -> sizing -> ClusterPlan -> files.

Each step is a plain function so the CLI, the tests and the benchmarks drive the same code.
``load_checked`` is the one front door: every command goes through it, so every command
accepts and rejects the same specs. Errors raised by later stages (sizing, planner, network)
name a spec field; ``located`` adds the file and line of that field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.catalog.load import Catalog, default_catalog
from generator.errors import PodplanError, Problem
from generator.plan.lock.model import Lock
from generator.plan.models import ClusterPlan
from generator.render.files import OutFile
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.result import SizingResult
from generator.spec import limits
from generator.spec.load import LoadedSpec, load_spec
from generator.spec.messages import format_path
from generator.spec.resolve import check_references, prices_path


def load_checked(spec_file: str, catalog: Catalog | None = None) -> LoadedSpec:
    """Parse, validate and reference-check a spec file."""
    loaded = load_spec(spec_file)
    check_references(loaded, catalog or default_catalog())
    return loaded


def field_loc(path: str, loaded: LoadedSpec) -> tuple[str | int, ...]:
    """A problem's field path as a location: ``workloads.chat.tp`` or ``workloads[1].tp`` ->
    ``('workloads', 1, 'tp')`` (workloads may be named by name or by index)."""
    names = {w.name: i for i, w in enumerate(loaded.spec.workloads)}
    loc: list[str | int] = []
    for token in re.findall(r"\[(\d+)\]|([^.\[\]]+)", path):
        index, key = token
        if index:
            loc.append(int(index))
        elif loc == ["workloads"] and key in names:
            loc.append(names[key])
        else:
            loc.append(key)
    return tuple(loc)


def locate(err: PodplanError, loaded: LoadedSpec) -> PodplanError:
    """``err`` with the spec file as its source and each field's line filled in."""
    if err.source not in (None, loaded.path):
        return err

    def place(p: Problem) -> Problem:
        if not p.path or p.line is not None:
            return p
        loc = field_loc(p.path, loaded)
        return replace(p, path=format_path(loc), line=loaded.lines.line_of(loc))

    return PodplanError(err.summary, loaded.path, [place(p) for p in err.problems])


@contextmanager
def located(loaded: LoadedSpec) -> Iterator[None]:
    """Re-raise a stage's ``PodplanError`` located in the spec file."""
    try:
        yield
    except PodplanError as err:
        raise locate(err, loaded) from None


def _check_size(loaded: LoadedSpec, result: SizingResult) -> None:
    """The sized cluster must stay within ``limits.MAX_GPUS`` (inference load can push it)."""
    if result.gpus <= limits.MAX_GPUS:
        return
    worst = max(result.inference, key=lambda i: i.gpus, default=None)
    problems = []
    if worst is not None:
        i = next(k for k, w in enumerate(loaded.spec.workloads) if w.name == worst.name)
        loc = ("workloads", i, "requests_per_minute")
        problems.append(Problem(
            path=format_path(loc), line=loaded.lines.line_of(loc),
            message=f"needs {worst.gpus:,} GPUs ({worst.replicas:,} replicas)",
            allowed=f"a load served by at most {limits.MAX_GPUS:,} GPUs in all",
            hint="lower the load, or split the service over several clusters"))
    raise PodplanError(
        f"the workloads need {result.gpus:,} GPUs; podplan plans at most {limits.MAX_GPUS:,}",
        loaded.path, problems)


def size(
    loaded: LoadedSpec, catalog: Catalog | None = None, built_drive_tb: float = 0.0
) -> SizingResult:
    """Size every workload and the cluster, wall-clock included.

    Wall-clock needs the checkpoint bandwidth of the storage plan, and the storage plan is
    sized from the sizing (its checkpoints), so the sizing runs twice: once to size the
    storage, once with that storage's bandwidth (which the deadline is judged with). A
    storage that still changes is followed once more; ``plan`` builds its storage from the
    final sizing, so both report the same wall-clock (``built_drive_tb``: the plan lock's
    storage drive size, which ``plan`` keeps).
    """
    from generator.plan.run_env import run_environment
    from generator.sizing import size as size_spec

    cat = catalog or default_catalog()
    eff, notes = site_efficiency(loaded)
    with located(loaded):
        result = size_spec(loaded.spec, cat, eff)
        env = run_environment(loaded.spec, result, cat, built_drive_tb)
        for _ in range(3):
            result = size_spec(loaded.spec, cat, eff, env=env)
            settled = run_environment(loaded.spec, result, cat, built_drive_tb)
            if settled == env:
                break
            env = settled
    _check_size(loaded, result)
    return result.model_copy(update={"notes": [*notes, *result.notes]}) if notes else result


def site_efficiency(loaded: LoadedSpec) -> tuple[Efficiency | None, list[str]]:
    """The spec's site calibration over the built-in efficiencies, and the note saying so
    (None and no note without one; a calibration of other hardware is ignored, noted)."""
    from generator.sizing.model.efficiency import default_efficiency
    from generator.sizing.site_calibration import apply, load_site_calibration
    from generator.spec.resolve import site_calibration_path

    path = site_calibration_path(loaded)
    if path is None:
        return None, []
    cal = load_site_calibration(path, str(loaded.spec.site_calibration))
    hw = loaded.spec.hardware
    if (cal.server, cal.gpu) != (hw.server, hw.gpu):
        return None, [f"site calibration {cal.path} ignored: it was measured on {cal.gpu} in "
                      f"{cal.server}, this spec uses {hw.gpu} in {hw.server}"]
    return apply(default_efficiency(), cal, hw.gpu), [cal.note()]


def read_lock(loaded: LoadedSpec, out_dir: Path | None, fresh: bool = False) -> LockInput:
    """The plan lock under ``out_dir`` (``reports/<name>/plan.lock.yaml``), if there is one.

    ``out_dir`` None: no lock (library callers, benchmarks). ``fresh``: the lock is set
    aside and only its path is returned, for the plan notes."""
    from generator.plan.lock.read import parse_lock
    from generator.plan.lock.text import lock_path

    if out_dir is None:
        return LockInput()
    rel = lock_path(loaded.spec.name)
    path = out_dir / rel
    if not path.exists():
        return LockInput()
    if fresh:
        return LockInput(ignored=rel)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror
        raise PodplanError(f"cannot read the plan lock {path}: {why}") from None
    lock = parse_lock(text, str(path))
    if lock.cluster != loaded.spec.name:
        raise PodplanError(
            "the plan lock belongs to another cluster",
            str(path),
            [Problem(path="cluster", message=f"{lock.cluster!r}, the spec is {loaded.spec.name!r}",
                     line=lock.line_of("cluster"))])
    return LockInput(lock=lock)


@dataclass(frozen=True)
class LockInput:
    """The lock a plan keeps (``lock``), or the one ``--fresh`` set aside (``ignored``)."""

    lock: Lock | None = None
    ignored: str | None = None


def plan(
    loaded: LoadedSpec,
    catalog: Catalog | None = None,
    *,
    out_dir: Path | None = None,
    fresh: bool = False,
) -> ClusterPlan:
    """Resolve the whole cluster from a checked spec (keeping the plan lock under
    ``out_dir`` unless ``fresh``)."""
    return _plan(loaded, catalog or default_catalog(), read_lock(loaded, out_dir, fresh))


def _plan(loaded: LoadedSpec, cat: Catalog, held: LockInput) -> ClusterPlan:
    from generator.plan.build import build_plan

    sized = size(loaded, cat, held.lock.storage_drive_tb if held.lock else 0.0)
    with located(loaded):
        return build_plan(loaded.spec, loaded.path, sized, cat, held.lock, held.ignored)


@dataclass(frozen=True)
class Outputs:
    """Everything ``podplan plan`` writes; ``manifest`` is the path of the manifest among
    ``files`` (what podplan owns, see ``render.manifest``); ``messages``: what to tell the
    user besides the files (identity changes against the plan lock)."""

    files: list[OutFile]
    manifest: str
    name: str
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """For stderr: the planned cluster does not run every workload (``podplan size`` says
    why); ``validate`` said 'ok' and ``plan`` wrote the tree without a word."""


def fit_warnings(sizing: SizingResult, spec_file: str) -> list[str]:
    """One line when some workload does not fit the cluster the plan is for."""
    if sizing.fits:
        return []
    names = [w.name for w in sizing.workloads if not w.fits]
    short = sizing.short_of_gpus  # the fixed hardware.gpus
    what = (f"workload(s) {', '.join(names)} do not fit on this cluster" if names
            else "the workloads do not fit on this cluster")
    why = f" ({'; '.join(short)})" if short else f" ({sizing.gpus} GPUs)"
    return [f"{what}{why}; the files describe it anyway. `podplan size {spec_file}` says why "
            "and what would fit"]


def slo_warnings(sizing: SizingResult, spec_file: str) -> list[str]:
    """The serving workloads that miss their latency SLOs (only ``size`` and the report's
    workload table said so, and ``plan`` bought the GPUs without a word)."""
    from generator.sizing.report import slo_misses

    return [f"{miss}. `podplan size {spec_file}` says why and what would meet them"
            for miss in slo_misses(sizing)]


def context_warnings(loaded: LoadedSpec, catalog: Catalog) -> list[str]:
    """Serving requests longer than the model's context, and SLOs that read like a unit
    slip (the size notes, on stderr too)."""
    from generator.sizing.engine import context_note
    from generator.spec.checks.plausible import slo_unit_notes
    from generator.spec.models import InferenceWorkload

    return [f"{w.name}: {note}" for w in loaded.spec.workloads
            if isinstance(w, InferenceWorkload) and (note := context_note(w, catalog))] + [
        note for w in loaded.spec.workloads if isinstance(w, InferenceWorkload)
        for note in slo_unit_notes(w)]  # a unit slip, before the missed-SLO warning


def bill_of_materials(loaded: LoadedSpec, cluster: ClusterPlan, catalog: Catalog | None = None):  # type: ignore[no-untyped-def]
    """The priced BOM of a plan (price book from the catalog, overridden by ``prices:``)."""
    from generator.bom import build_bom, load_price_book

    with located(loaded):
        shown = None if loaded.spec.prices is None else str(loaded.spec.prices)
        book = load_price_book(catalog or default_catalog(), prices_path(loaded), shown)
        return build_bom(cluster, book)


def outputs(
    loaded: LoadedSpec,
    catalog: Catalog | None = None,
    *,
    out_dir: Path | None = None,
    fresh: bool = False,
) -> Outputs:
    """Plan the cluster and render every artifact from that one plan."""
    from generator.gcpause import gc_paused

    with gc_paused():  # tens of thousands of acyclic objects: a collection only costs time
        return _outputs(loaded, catalog, out_dir, fresh)


def _outputs(
    loaded: LoadedSpec, catalog: Catalog | None, out_dir: Path | None, fresh: bool
) -> Outputs:
    from generator.emit.inventory import emit_inventory
    from generator.emit.pulumi import emit_pulumi
    from generator.emit.report import emit_report
    from generator.emit.reports import emit_reports
    from generator.render.manifest import build_manifest, manifest_path

    cat = catalog or default_catalog()
    held = read_lock(loaded, out_dir, fresh)
    cluster = _plan(loaded, cat, held)
    bom = bill_of_materials(loaded, cluster, cat)
    with located(loaded):
        files = [*emit_reports(cluster, bom), *emit_inventory(cluster), *emit_pulumi(cluster)]
        files += emit_report(cluster, bom, [f.path for f in files])
    manifest = manifest_path(cluster.name)
    files.append(build_manifest(cluster.spec_file, manifest, files))
    before = held.lock.changes if held.lock else []
    news = list(cluster.identity_changes) if cluster.identity_changes != before else []
    return Outputs(files=sorted(files), manifest=manifest, name=cluster.name, messages=news,
                   warnings=[*context_warnings(loaded, cat),
                             *fit_warnings(cluster.sizing, loaded.path),
                             *slo_warnings(cluster.sizing, loaded.path), *bom.notes])

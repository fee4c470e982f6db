"""Plan every point of a sweep through the normal pipeline and pick the cheapest good one.

A spec that only serves is swept over GPU types by what serving its load costs
(``sweep.serving``); everything below about time and deadlines is the training sweep.

A point is the spec with ``hardware.gpu``/``hardware.gpus`` (and the priced clouds) replaced;
it is sized, planned and priced exactly as ``podplan plan`` would. Time is the plan's
wall-clock for the training run(s) (failures, restarts and checkpoints included); $ per run is
the cloud equivalent's on-demand price for that time; capex and power come from the BOM and
the plan. A point that cannot be planned (no layout with the spec's pins) is kept with its
reason, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator import pipeline
from generator.catalog.load import Catalog, default_catalog
from generator.errors import PodplanError, Problem
from generator.sizing.result import SizingResult
from generator.spec.load import LoadedSpec
from generator.spec.models import Spec
from generator.spec.site import Cloud
from generator.sweep.grid import SweepGrid
from generator.sweep.serving import (
    is_serving_only,
    served_tokens_per_s,
    serving_fields,
    sized_note,
    usd_per_mtok,
)


@dataclass(frozen=True)
class SweepPoint:
    """One planned point; money and time are None when the point could not be planned."""

    gpu: str
    gpus: int
    nodes: int
    cloud: str | None
    instance: str | None
    time_hours: float | None
    usd_per_run: float | None
    usd_per_hour: float | None
    capex_usd: float | None
    it_kw: float | None
    fits: bool
    meets_deadline: bool
    note: str = ""
    cheapest: bool = False
    layout: str = ""
    """Serving sweeps (``sweep.serving``): replicas x layout and batch of each workload."""
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    meets_slo: bool | None = None
    usd_per_month: float | None = None
    usd_per_mtok: float | None = None


@dataclass(frozen=True)
class SweepResult:
    """Every point, in GPU type then size order, and the sweep's deadline."""

    name: str
    spec_file: str
    deadline_hours: float | None
    points: list[SweepPoint]
    serving: bool = False
    """A spec that only serves: points meet SLOs, not a deadline (``sweep.serving``)."""

    @property
    def ranked_by(self) -> str:
        """``usd_per_run`` (``usd_per_mtok`` serving), or ``capex_usd`` when no cloud is
        priced."""
        return ranking(self.points, self.serving)

    @property
    def best(self) -> SweepPoint | None:
        """The cheapest point (per run) that fits and meets the deadline."""
        return next((p for p in self.points if p.cheapest), None)


def _variant(loaded: LoadedSpec, gpu: str, gpus: int, clouds: tuple[str, ...] | None
             ) -> LoadedSpec:
    """The spec at one point (``gpus`` 0: sized by the workloads, a serving sweep's default)."""
    spec = loaded.spec
    update: dict[str, object] = {
        "hardware": spec.hardware.model_copy(update={"gpu": gpu, "gpus": gpus or None}),
    }
    if clouds is not None:
        update["provisioning"] = spec.provisioning.model_copy(
            update={"clouds": [Cloud(c) for c in clouds]})
    new = Spec.model_validate(spec.model_copy(update=update).model_dump())
    return LoadedSpec(spec=new, path=loaded.path, lines=loaded.lines)


def _points(loaded: LoadedSpec, gpu: str, gpus: int, grid: SweepGrid,
            catalog: Catalog) -> list[SweepPoint]:
    nodes = gpus // catalog.servers[loaded.spec.hardware.server].gpu_slots
    empty = SweepPoint(gpu, gpus, nodes, None, None, None, None, None, None, None, False, False)
    try:
        variant = _variant(loaded, gpu, gpus, grid.clouds)
        plan = pipeline.plan(variant, catalog)
        bom = pipeline.bill_of_materials(variant, plan, catalog)
    except PodplanError as err:
        return [replace(empty, note=err.summary)]
    hours = plan.reliability.wallclock_hours
    fits, note = _fits(plan.sizing, gpus)
    on_time = fits and (grid.deadline_hours is None or hours <= grid.deadline_hours)
    base = replace(empty, nodes=len(plan.nodes_with_role("compute")), time_hours=hours,
                   capex_usd=bom.capex_usd, it_kw=plan.power.it_kw, fits=fits,
                   meets_deadline=on_time, note=note)
    served = 0.0
    if is_serving_only(variant.spec):  # no run to time: the SLOs are its target
        fields = serving_fields(plan.sizing)
        base = replace(base, gpus=sum(i.gpus for i in plan.sizing.inference), time_hours=None,
                       meets_deadline=fits and fields["meets_slo"] is not False,
                       note="; ".join(filter(None, [note, sized_note(plan.sizing)])),
                       **fields)  # type: ignore[arg-type]
        served = served_tokens_per_s(variant.spec, plan.sizing)
    costs = sorted(bom.cloud, key=lambda c: (c.usd_per_month if served else c.usd_per_run,
                                             c.provider))
    if grid.clouds is None:
        costs = costs[:1]
    if not costs:
        why = (f"no priced cloud offers {gpu}" if variant.spec.provisioning.clouds
               else "no cloud to price (provisioning.clouds is empty; try --cloud)")
        return [replace(base, note=base.note or why)]
    return [replace(base, cloud=c.provider, instance=c.instance,
                    usd_per_run=None if served else c.usd_per_run, usd_per_hour=c.usd_per_hour,
                    usd_per_month=c.usd_per_month if served else None,
                    usd_per_mtok=usd_per_mtok(c.usd_per_month, served) if served else None)
            for c in costs]


def _fits(sizing: SizingResult, gpus: int) -> tuple[bool, str]:
    """Whether the point fits, and what to say. Training is timed on all ``gpus`` while
    serving wants its GPUs on top (``podplan size`` notes it on a fixed cluster): say so on
    the point, or the table reads as if both ran on it."""
    if not sizing.fits:  # too few GPUs for serving beside training is not a memory miss
        if sizing.short_of_gpus:
            return False, f"does not fit: {'; '.join(sizing.short_of_gpus)}"
        return False, "does not fit in GPU memory"
    train = max((t.gpus for t in sizing.training), default=0)
    serve = sum(i.gpus for i in sizing.inference)
    if train and serve and train + serve > gpus:
        return True, (f"training on all {gpus} GPUs; serving needs {serve} more "
                      f"({train + serve} together)")
    return True, ""


def ranking(points: list[SweepPoint], serving: bool = False) -> str:
    """What "cheapest" compares: $ per run ($ per million output tokens when serving) when
    any point has a cloud price, else capex."""
    key = "usd_per_mtok" if serving else "usd_per_run"
    return key if any(getattr(p, key) is not None for p in points) else "capex_usd"


def _mark_cheapest(points: list[SweepPoint], serving: bool = False) -> list[SweepPoint]:
    key = ranking(points, serving)
    good = [p for p in points if p.meets_deadline and getattr(p, key) is not None]
    if not good:
        return points
    best = min(good, key=lambda p: (getattr(p, key), p.gpus, p.gpu, p.cloud or ""))
    return [replace(p, cheapest=True) if p is best else p for p in points]


def check_sweepable(loaded: LoadedSpec) -> None:
    """Refuse a spec with nothing to sweep before its options are read: one with no
    workload at all (a serving-only spec is swept over GPU types, ``sweep.serving``)."""
    if not loaded.spec.training and not loaded.spec.inference:
        raise PodplanError("sweep compares workloads; this spec has none", loaded.path,
                           [Problem(path="workloads", message="no workload to size")])


def run_sweep(loaded: LoadedSpec, grid: SweepGrid, catalog: Catalog | None = None
              ) -> SweepResult:
    """Plan every point of ``grid`` for the spec in ``loaded``."""
    cat = catalog or default_catalog()
    check_sweepable(loaded)
    points: list[SweepPoint] = []
    for gpu in grid.gpu_types:
        for gpus in grid.gpus:
            points += _points(loaded, gpu, gpus, grid, cat)
    serving = is_serving_only(loaded.spec)
    return SweepResult(loaded.spec.name, loaded.path, None if serving else grid.deadline_hours,
                       _mark_cheapest(points, serving), serving)

"""Synthetic inputs and a timer for the plan stage (benchmarks and tests).

``time_plan(nodes)`` builds the plan, the BOM and the report files for an XE9680/H100
cluster of ``nodes`` nodes from a synthetic sizing result, so the plan stage can be timed
without the sizing engine. ``benchmarks/speed.py`` calls it.
"""

from __future__ import annotations

import time
from typing import Any

from generator.catalog.load import Catalog, default_catalog
from generator.plan.lock.model import Lock
from generator.plan.models import ClusterPlan
from generator.sizing.result import MemoryBreakdown, SizingResult, TrainingEstimate, TrainingLayout
from generator.spec.models import Spec


def synthetic_sizing(
    name: str,
    nodes: int,
    gpus_per_node: int = 8,
    *,
    server: str = "xe9680",
    gpu: str = "h100-sxm-80gb",
    checkpoint_gb: float = 1000.0,
    time_hours: float = 100.0,
    kind: str = "pretrain",
    job_gpus: int | None = None,
) -> SizingResult:
    """A ``SizingResult`` with one training workload on the whole cluster."""
    gpus = nodes * gpus_per_node
    job = job_gpus or gpus
    est = TrainingEstimate(
        name="train",
        kind=kind,  # type: ignore[arg-type]
        model="synthetic",
        gpus=job,
        parallelism=TrainingLayout(
            tp=min(8, job), pp=1, dp=max(1, job // 8), micro_batch_size=1, recompute="selective"
        ),
        memory_gib_per_gpu=60.0,
        memory=MemoryBreakdown(
            weights_gib=10, gradients_gib=10, optimizer_gib=20, activations_gib=15, overhead_gib=5
        ),
        fits=True,
        step_time_s=1.0,
        steps=1000,
        processed_tokens=1e9,
        tokens_per_second_per_gpu=1000.0,
        mfu=0.4,
        time_hours=time_hours,
        gpu_hours=time_hours * job,
        meets_deadline=None,
        checkpoint_gb=checkpoint_gb,
        params_b=70.0,
    )
    return SizingResult(
        name=name,
        server=server,
        gpu=gpu,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        gpus=gpus,
        training=[est],
        fits=True,
        order=["train"],
    )


def synthetic_spec(name: str, nodes: int, /, **sections: Any) -> Spec:
    """A spec for ``nodes`` XE9680 nodes; ``sections`` override top-level spec keys."""
    doc: dict[str, Any] = {
        "name": name,
        "workloads": [{"name": "train", "kind": "pretrain", "model": "llama2-70b", "steps": 100}],
        "hardware": {"gpus": nodes * 8},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key] = {**doc[key], **value}
        else:
            doc[key] = value
    return Spec.model_validate(doc)


def plan_for(
    nodes: int, catalog: Catalog | None = None, lock: Lock | None = None, **sections: Any
) -> tuple[Spec, ClusterPlan]:
    """Spec and plan of a synthetic ``nodes``-node cluster (keeping ``lock`` if given)."""
    from generator.plan.build import build_plan

    cat = catalog or default_catalog()
    name = f"bench-{nodes}"
    spec = synthetic_spec(name, nodes, **sections)
    gpn = cat.servers[spec.hardware.server].gpu_slots
    if "gpus" not in sections.get("hardware", {}):
        spec = spec.model_copy(
            update={"hardware": spec.hardware.model_copy(update={"gpus": nodes * gpn})}
        )
    sizing = synthetic_sizing(name, nodes, gpn, server=spec.hardware.server, gpu=spec.hardware.gpu)
    return spec, build_plan(spec, f"examples/{name}.yaml", sizing, cat, lock)


def time_plan(nodes: int, repeat: int = 3) -> dict[str, float]:
    """Best-of-``repeat`` seconds for plan, BOM and report files of a ``nodes``-node cluster.

    ``*_s`` are wall-clock seconds; ``cpu_s`` is the process CPU time of the best run, which
    is what to compare on a busy machine.
    """
    from generator.bom import build_bom, load_price_book
    from generator.emit.reports import emit_reports

    cat = default_catalog()
    plan_for(1, cat)  # load the catalog once, outside the timing
    best: dict[str, float] = {}
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        _, plan = plan_for(nodes, cat)
        t1 = time.perf_counter()
        bom = build_bom(plan, load_price_book(cat, None))
        t2 = time.perf_counter()
        emit_reports(plan, bom)
        t3, c3 = time.perf_counter(), time.process_time()
        run = {
            "plan_s": t1 - t0,
            "bom_s": t2 - t1,
            "reports_s": t3 - t2,
            "total_s": t3 - t0,
            "cpu_s": c3 - c0,
        }
        best = run if not best or run["cpu_s"] < best["cpu_s"] else best
    return best

"""The inputs ``podplan size`` computes wall-clock with, taken from the plan stage.

Wall-clock (``generator.sizing.wallclock``) needs the shared storage's checkpoint bandwidth
and the failure rate. Both belong to the plan: the storage plan is sized from the sizing's
checkpoints (and the GPU nodes' front-end links), the failure rate is catalog data. This
module builds them for ``pipeline.size`` exactly as ``build_plan`` does, so ``size`` and
``plan`` report the same wall-clock.
"""

from __future__ import annotations

from generator.catalog.load import Catalog
from generator.errors import PodplanError
from generator.plan.catalog_models import PlanCatalog
from generator.plan.facility.layout import node_link_gbytes
from generator.plan.reliability import environment, failure_stats
from generator.plan.storage import plan_storage
from generator.sizing.result import SizingResult
from generator.sizing.wallclock import RunEnvironment
from generator.spec.models import Spec


def run_environment(
    spec: Spec, sizing: SizingResult, catalog: Catalog, built_drive_tb: float = 0.0
) -> RunEnvironment:
    """The environment ``podplan size`` and ``podplan plan`` both size wall-clock with: the
    write/read bandwidth of the storage plan built from this sizing, and the failure rate.
    A spec whose storage cannot be planned gets no checkpoint time (``plan`` then reports
    the storage error; ``size`` notes the omission on each estimate)."""
    pc = PlanCatalog(catalog)
    stats = failure_stats(pc)
    try:
        server = pc.servers[spec.hardware.server]
        storage = plan_storage(spec, sizing, pc, "", node_link_gbytes(spec, pc, server),
                               built_drive_tb)
    except PodplanError:
        return environment(stats, 0.0, 0.0)
    return environment(stats, storage.write_gbps, storage.read_gbps)

"""The pipeline, end to end: spec file -> checked spec -> sizing -> ClusterPlan -> files.

Each step is a plain function so the CLI, the tests and the benchmarks drive the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.load import Catalog, default_catalog
from generator.plan.models import ClusterPlan
from generator.render.files import OutFile
from generator.sizing.result import SizingResult
from generator.spec.load import LoadedSpec, load_spec
from generator.spec.resolve import check_references, prices_path


def load_checked(spec_file: str, catalog: Catalog | None = None) -> LoadedSpec:
    """Parse, validate and reference-check a spec file."""
    loaded = load_spec(spec_file)
    check_references(loaded, catalog or default_catalog())
    return loaded


def size(loaded: LoadedSpec, catalog: Catalog | None = None) -> SizingResult:
    """Size every workload and the cluster, wall-clock included.

    Wall-clock needs the checkpoint bandwidth of the storage plan, and the storage plan is
    sized from the sizing (its checkpoints), so the sizing runs twice: once to size the
    storage, once with that storage's bandwidth (which the deadline is judged with). A
    storage that still changes is followed once more; ``plan`` builds its storage from the
    final sizing, so both report the same wall-clock.
    """
    from generator.plan.reliability import run_environment
    from generator.sizing import size as size_spec

    cat = catalog or default_catalog()
    result = size_spec(loaded.spec, cat)
    env = run_environment(loaded.spec, result, cat)
    for _ in range(3):
        result = size_spec(loaded.spec, cat, env=env)
        settled = run_environment(loaded.spec, result, cat)
        if settled == env:
            break
        env = settled
    return result


def plan(loaded: LoadedSpec, catalog: Catalog | None = None) -> ClusterPlan:
    """Resolve the whole cluster from a checked spec."""
    from generator.plan.build import build_plan

    cat = catalog or default_catalog()
    return build_plan(loaded.spec, loaded.path, size(loaded, cat), cat)


@dataclass(frozen=True)
class Outputs:
    """Everything ``podplan plan`` writes, and the directories it owns wholesale."""

    files: list[OutFile]
    owned_dirs: list[str]


def bill_of_materials(loaded: LoadedSpec, cluster: ClusterPlan, catalog: Catalog | None = None):  # type: ignore[no-untyped-def]
    """The priced BOM of a plan (price book from the catalog, overridden by ``prices:``)."""
    from generator.bom import build_bom, load_price_book

    book = load_price_book(catalog or default_catalog(), prices_path(loaded))
    return build_bom(cluster, book)


def outputs(loaded: LoadedSpec, catalog: Catalog | None = None) -> Outputs:
    """Plan the cluster and render every artifact from that one plan."""
    from generator.emit.inventory import emit_inventory
    from generator.emit.pulumi import emit_pulumi
    from generator.emit.report import emit_report
    from generator.emit.reports import emit_reports

    cat = catalog or default_catalog()
    cluster = plan(loaded, cat)
    bom = bill_of_materials(loaded, cluster, cat)
    files = [*emit_reports(cluster, bom), *emit_inventory(cluster), *emit_pulumi(cluster)]
    files += emit_report(cluster, bom, [f.path for f in files])
    owned = [f"reports/{cluster.name}", f"inventories/{cluster.name}"]
    return Outputs(files=sorted(files), owned_dirs=owned)

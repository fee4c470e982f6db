"""The pipeline, end to end: spec file -> checked spec -> sizing -> ClusterPlan -> files.

Each step is a plain function so the CLI, the tests and the benchmarks drive the same code.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from generator.catalog.load import Catalog, default_catalog
from generator.errors import PodplanError
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
    """Size every workload and the cluster."""
    from generator.sizing import size as size_spec

    return size_spec(loaded.spec, catalog or default_catalog())


def plan(loaded: LoadedSpec, catalog: Catalog | None = None) -> ClusterPlan:
    """Resolve the whole cluster from a checked spec."""
    from generator.plan.build import build_plan

    cat = catalog or default_catalog()
    sizing = size(loaded, cat)
    try:
        return build_plan(loaded.spec, loaded.path, sizing, cat)
    except PodplanError as err:
        raise _located(err, loaded) from None


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _located(err: PodplanError, loaded: LoadedSpec) -> PodplanError:
    """The plan's error with the spec line of each problem's field (or its nearest parent)."""
    if err.source != loaded.path:
        return err
    problems = []
    for p in err.problems:
        loc = tuple(int(i) if i else k for k, i in _PART.findall(p.path))
        line = p.line or (loaded.lines.line_of(loc) if loc else None)
        problems.append(dataclasses.replace(p, line=line))
    return PodplanError(err.summary, err.source, problems)


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
    from generator.plan._construct import gc_paused

    with gc_paused():  # tens of thousands of acyclic objects: a collection only costs time
        return _outputs(loaded, catalog)


def _outputs(loaded: LoadedSpec, catalog: Catalog | None) -> Outputs:
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

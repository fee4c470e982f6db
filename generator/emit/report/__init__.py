"""``reports/<name>/report.html``: the plan as one self-contained page to look at.

Sections: summary, workloads (layout, memory, runners-up), the fabric and every other network
drawn by groups, rack elevations, the BOM with cabling and cloud cost, reliability, and what
was written with the commands to use it. Drawings are SVG built here from plan data; charts
are matplotlib SVG (see ``mpl``); the template only serializes. Byte-identical for one plan.
"""

from __future__ import annotations

from generator.bom import BillOfMaterials
from generator.plan.models import ClusterPlan
from generator.render.files import OutFile


def report_path(plan: ClusterPlan) -> str:
    """Where the report goes in the output tree."""
    return f"reports/{plan.name}/report.html"


def emit_report(plan: ClusterPlan, bom: BillOfMaterials, written: list[str]) -> list[OutFile]:
    """The report file; ``written`` lists the other files of this run (for its last section)."""
    return start_report(plan, bom).finish(written)


class ReportInProgress:
    """``start_report``'s handle: charts may still be drawing in a worker."""

    def __init__(self, plan: ClusterPlan, bom: BillOfMaterials, background: bool) -> None:
        from generator.emit.report.page import start_report as start

        self.path = report_path(plan)
        self._pending = start(plan, bom, background)

    def finish(self, written: list[str]) -> list[OutFile]:
        """The report file, listing ``written`` and itself as this run's files."""
        return [OutFile(self.path, self._pending.finish(sorted([*written, self.path])))]


def start_report(plan: ClusterPlan, bom: BillOfMaterials, background: bool = False
                 ) -> ReportInProgress:
    """Start the report; with ``background`` its charts draw in a forked worker meanwhile."""
    return ReportInProgress(plan, bom, background)

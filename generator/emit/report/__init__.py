"""``reports/<name>/report.html``: the plan as one self-contained page to look at.

Sections: summary, workloads (layout, memory, runners-up), the fabric and every other network
drawn by groups, rack elevations, the BOM with cabling and cloud cost, reliability, and what
was written with the commands to use it. Drawings and charts are SVG built here from plan
data (charts: ``plot``); the template only serializes. Byte-identical for one plan.
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
    from generator.emit.report.page import report_html

    path = report_path(plan)
    return [OutFile(path, report_html(plan, bom, sorted([*written, path])))]

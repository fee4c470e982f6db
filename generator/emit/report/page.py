"""Assemble the report's sections and serialize them through the page template."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.bom import BillOfMaterials
from generator.emit.report.background import ChartWorker
from generator.emit.report.blocks import Section, chart_jobs, with_charts
from generator.emit.report.facility import racks_section
from generator.emit.report.money import bom_section
from generator.emit.report.networks import fabric_section
from generator.emit.report.operations import outputs_section, reliability_section
from generator.emit.report.summary import summary_section
from generator.emit.report.workloads import workloads_section
from generator.plan.models import ClusterPlan
from generator.render.env import render
from generator.render.files import header_lines, regenerate_command


def plan_sections(plan: ClusterPlan, bom: BillOfMaterials) -> list[Section]:
    """Every section but the last (what was written), in reading order."""
    return [
        summary_section(plan, bom),
        workloads_section(plan),
        fabric_section(plan),
        racks_section(plan),
        bom_section(plan, bom),
        reliability_section(plan),
    ]


def page_html(plan: ClusterPlan, sections: list[Section]) -> str:
    """The whole page: one file, CSS, script and drawings inline, nothing fetched."""
    return render(
        "report/page.html.jinja",
        title=f"podplan report: {plan.name}",
        name=plan.name,
        spec_file=plan.spec_file,
        command=regenerate_command(plan.spec_file),
        header=header_lines(plan.spec_file),
        sections=sections,
    )


@dataclass
class PendingReport:
    """A report whose charts are being drawn; ``finish`` adds what was written and renders."""

    plan: ClusterPlan
    sections: list[Section]
    charts: Callable[[], list[str]]

    def finish(self, written: list[str]) -> str:
        """The page, once the charts are drawn."""
        drawn = with_charts(self.sections, self.charts())
        return page_html(self.plan, [*drawn, outputs_section(self.plan, written)])


def start_report(plan: ClusterPlan, bom: BillOfMaterials, background: bool = False
                 ) -> PendingReport:
    """Build the sections now; draw the charts in a worker when ``background``."""
    worker = ChartWorker(background)
    sections = plan_sections(plan, bom)
    return PendingReport(plan, sections, worker.submit(chart_jobs(sections)))


def report_html(plan: ClusterPlan, bom: BillOfMaterials, written: list[str]) -> str:
    """The page, charts drawn in this process."""
    return start_report(plan, bom).finish(written)

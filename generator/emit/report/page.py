"""Assemble the report's sections and serialize them through the page template."""

from __future__ import annotations

from generator.bom import BillOfMaterials
from generator.emit.report.blocks import Section
from generator.emit.report.facility import racks_section
from generator.emit.report.freed import freed_section
from generator.emit.report.money import bom_section
from generator.emit.report.networks import fabric_section
from generator.emit.report.operations import outputs_section, reliability_section
from generator.emit.report.summary import summary_section
from generator.emit.report.workloads import workloads_section
from generator.plan.models import ClusterPlan
from generator.render.env import render
from generator.render.files import header_lines, regenerate_command


def sections(plan: ClusterPlan, bom: BillOfMaterials, written: list[str]) -> list[Section]:
    """Every section, in reading order (freed hardware only after a re-plan freed some)."""
    freed = freed_section(plan)
    return [
        summary_section(plan, bom),
        workloads_section(plan),
        fabric_section(plan),
        racks_section(plan),
        *([freed] if freed else []),
        bom_section(plan, bom),
        reliability_section(plan),
        outputs_section(plan, written),
    ]


def report_html(plan: ClusterPlan, bom: BillOfMaterials, written: list[str]) -> str:
    """The whole page: one file, CSS, script and drawings inline, nothing fetched."""
    return render(
        "report/page.html.jinja",
        title=f"podplan report: {plan.name}",
        name=plan.name,
        spec_file=plan.spec_file,
        command=regenerate_command(plan.spec_file),
        header=header_lines(plan.spec_file),
        sections=sections(plan, bom, written),
    )

"""The priced bill of materials."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BomLine(_Frozen):
    """One line: a part, how many the plan has, and what one costs."""

    category: str
    part: str = Field(description="Human-readable part name.")
    part_number: str = Field(
        default="",
        description="Orderable part number (NVIDIA OPN, cable PN); '' = sold by quote/proposal.",
    )
    catalog_id: str = Field(description="Price-book / catalog id ('' when not in either).")
    quantity: int
    unit: str = Field(description="What one unit is: node, switch, module, cable, rack ...")
    unit_usd: float | None = Field(description="None = no price known (a gap).")
    extended_usd: float | None
    source: str = Field(description="Where the price comes from (price book id and sources).")
    estimate: bool = True
    note: str = ""
    uses: dict[str, int] = Field(
        default_factory=dict,
        description="Catalog id -> quantity when one part number serves several catalog "
        "entries (one fibre for node and switch links); empty = all under catalog_id.",
    )


class CloudCost(_Frozen):
    """The cloud equivalent's cost and its break-even against buying the cluster."""

    provider: str
    instance: str
    count: int
    usd_per_hour: float
    usd_per_run: float
    filesystem_usd_per_month: float | None
    usd_per_month: float = Field(description="GPU instances 24x7 (730 h) + file system.")
    break_even_months: float | None = Field(
        description="Capex / (cloud per month - on-prem power per month); None = never."
    )


class BillOfMaterials(_Frozen):
    """Everything ``bom.*`` shows, derived from one ClusterPlan."""

    name: str
    spec_file: str
    price_book: str
    lines: list[BomLine]
    hardware_usd: float
    capex_usd: float
    unpriced_lines: int
    power_usd_per_month: float
    cloud: list[CloudCost]
    summary: dict[str, Any] = Field(description="Cluster figures for bom.json's summary.")
    notes: list[str] = Field(
        default_factory=list,
        description="Price-book warnings: an override that set only part of a price.",
    )

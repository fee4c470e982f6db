"""The acceptance figures (``catalog/data/acceptance.yaml``): what healthy hardware measures.

Each figure is a fraction of a catalog rate (NVLink, NIC line rate, HBM peak) with its
sources; the tolerances say how far below (or above) the expected value a measurement may
fall and still pass. Loaded through the catalog like every other family, so a site or a
test can point ``Catalog`` at another data directory.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.load import Catalog
from generator.catalog.models import CatalogItem
from generator.errors import PodplanError

FIGURES = ("nccl_nvlink_efficiency", "nccl_nic_efficiency", "ib_write_bw_efficiency",
           "hbm_stream_efficiency")
TOLERANCES = ("nccl", "ib_write_bw", "hbm", "power_limit", "clocks", "max_clock_vs_cluster")


class Figure(CatalogItem):
    """One measured fraction of a rate, with its sources."""

    value: float


@dataclass(frozen=True)
class AcceptanceData:
    """Figures, tolerances (percent) and the nccl-tests sizes compared and listed."""

    figures: dict[str, Figure]
    tolerances_pct: dict[str, float]
    compare_from_bytes: int
    listed_sizes_bytes: tuple[int, ...]

    def value(self, key: str) -> float:
        return self.figures[key].value

    def cite(self, key: str) -> str:
        """``0.94 [A3, A4, A5]``: the value and where it comes from."""
        f = self.figures[key]
        return f"{f.value:g} [{', '.join(f.sources)}]"


def acceptance_data(catalog: Catalog) -> AcceptanceData:
    """The acceptance family, checked for every figure and tolerance the model reads."""
    figures = catalog.family("acceptance", Figure)
    doc = catalog.raw("acceptance")
    source = str(catalog.data_dir / "acceptance.yaml")
    missing = [k for k in FIGURES if k not in figures]
    tolerances = doc.get("tolerances_pct") or {}
    missing += [f"tolerances_pct.{k}" for k in TOLERANCES if k not in tolerances]
    if missing:
        raise PodplanError(f"acceptance data lacks {', '.join(missing)}", source)
    try:
        return AcceptanceData(
            figures=figures,
            tolerances_pct={str(k): float(v) for k, v in tolerances.items()},
            compare_from_bytes=int(doc["compare_from_bytes"]),
            listed_sizes_bytes=tuple(int(s) for s in doc["listed_sizes_bytes"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise PodplanError(f"acceptance data is malformed ({exc!r})", source) from None

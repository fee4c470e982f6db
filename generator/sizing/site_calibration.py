"""A site calibration: one cluster's measured efficiencies over the built-in ones.

``podplan calibrate --from reports/<name>/acceptance/<run>.json`` writes it from an
acceptance run: measured / expected nccl-tests bus bandwidth on one node (NVLink) and
across nodes (fabric), and expected / measured step time of the short training run
(compute), each a factor on the built-in efficiency the sizing engine fits on published
runs. A spec opts in with ``site_calibration: <file>``; ``size`` and ``plan`` then say it
is in use. The factors apply only to the server and GPU they were measured on, and a
scaled efficiency never exceeds 1 (NVLink SHARP can make all_reduce beat the ring model;
that is no reason to assume a faster link).

The built-in calibration stays the default, and acceptance expectations always use it, so
a later acceptance run is measured against the same yardstick, not against itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from generator.errors import PodplanError, Problem
from generator.sizing.model.efficiency import Efficiency

VERSION = 1
FACTORS = {
    "nvlink": "network.nvlink_efficiency",
    "fabric": "network.fabric_efficiency",
    "compute": "compute.gemm_efficiency",
}
"""Factor name -> the built-in efficiency it scales."""
LIMITS = (0.2, 2.0)
"""A factor outside this range is a broken measurement, not a calibration."""


@dataclass(frozen=True)
class SiteCalibration:
    path: str
    cluster: str
    run: str
    server: str
    gpu: str
    factors: dict[str, float]

    def note(self) -> str:
        parts = ", ".join(f"{k} x{v:.3g}" for k, v in sorted(self.factors.items()))
        return (f"site calibration in use: {self.path} (cluster {self.cluster}, acceptance "
                f"run {self.run}): {parts} on the built-in efficiencies")


def _problem(path: Path, field: str, message: str, allowed: str | None = None) -> PodplanError:
    return PodplanError("site calibration is not valid", str(path),
                        [Problem(path=field, message=message, allowed=allowed)])


def _factors(doc: dict[str, Any], path: Path) -> dict[str, float]:
    raw = doc.get("factors")
    if not isinstance(raw, dict) or not raw:
        raise _problem(path, "factors", "missing or empty", ", ".join(FACTORS))
    out: dict[str, float] = {}
    for key, value in raw.items():
        if key not in FACTORS:
            raise _problem(path, f"factors.{key}", "unknown factor", ", ".join(FACTORS))
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not LIMITS[0] <= value <= LIMITS[1]:
            raise _problem(path, f"factors.{key}", f"must be a number in {LIMITS}, not "
                                                   f"{value!r}")
        out[str(key)] = float(value)
    return out


def load_site_calibration(path: Path, shown: str) -> SiteCalibration:
    """Read and check a file ``podplan calibrate`` wrote; ``shown``: the path as the spec
    gives it (for notes)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PodplanError(f"cannot read the site calibration ({exc})", str(path)) from None
    if not isinstance(doc, dict):
        raise _problem(path, "", "must be a mapping (as podplan calibrate writes it)")
    if doc.get("version") != VERSION:
        raise _problem(path, "version", f"unsupported version {doc.get('version')!r}",
                       str(VERSION))
    hw = doc.get("hardware") or {}
    for key in ("cluster", "run"):
        if not isinstance(doc.get(key), str):
            raise _problem(path, key, "missing")
    if not isinstance(hw, dict) or not all(isinstance(hw.get(k), str) for k in ("server", "gpu")):
        raise _problem(path, "hardware", "needs server and gpu")
    return SiteCalibration(shown, doc["cluster"], doc["run"], hw["server"], hw["gpu"],
                           _factors(doc, path))


def apply(eff: Efficiency, cal: SiteCalibration, gpu: str) -> Efficiency:
    """``eff`` with the site's factors applied (each result capped at 1)."""
    f = cal.factors
    net = eff.network
    net = replace(net, nvlink_efficiency=min(1.0, net.nvlink_efficiency * f.get("nvlink", 1.0)),
                  fabric_efficiency=min(1.0, net.fabric_efficiency * f.get("fabric", 1.0)))
    comp = eff.compute
    if "compute" in f:
        gemm = dict(comp.gemm_efficiency)
        gemm[gpu] = min(1.0, comp.peak_fraction(gpu) * f["compute"])
        comp = replace(comp, gemm_efficiency=gemm)
    return replace(eff, network=net, compute=comp)

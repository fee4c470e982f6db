"""``nvidia-smi`` output: ``--query-gpu=... --format=csv,nounits`` and ``topo -m``.

The query CSV (``nvidia-smi --help-query-gpu`` names the fields) starts with a header of
the field names, each followed by its unit in brackets (``clocks.max.sm [MHz]``), then one
line per GPU, values separated by ``", "``; unsupported values read ``[N/A]`` or
``[Not Supported]``. Columns are read by name, so any field order works.

``topo -m`` prints a tab-separated matrix (copies with spaces read the same): a header
row of ``GPU0 .. GPUn NIC0 .. NICk``
then ``CPU Affinity`` etc., one row per GPU and NIC with ``X`` (self), ``NV<n>`` (n bonded
NVLinks), ``PIX``/``PXB`` (one or more PCIe switches, the GPUDirect RDMA path),
``PHB``/``NODE``/``SYS`` (through the CPU), then a ``NIC Legend`` mapping ``NIC0`` to its
device (``mlx5_0``). Older drivers name the NIC columns by device directly.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from generator.acceptance.parse import Issue, number

QUERY_FIELDS = (
    "index", "name", "serial", "pci.bus_id", "clocks.max.sm",
    "clocks.applications.graphics", "enforced.power.limit", "ecc.mode.current",
    "ecc.errors.uncorrected.volatile.total", "pcie.link.width.current",
    "clocks_event_reasons.hw_slowdown", "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown", "clocks_event_reasons.hw_power_brake_slowdown",
)
"""What the ladder asks for (``--query-gpu=`` joined with commas)."""
SLOWDOWNS = tuple(f for f in QUERY_FIELDS if f.startswith("clocks_event_reasons."))
LEGEND = re.compile(r"^\s*(NIC\d+):\s*(\S+)\s*$")
FAILED = re.compile(r"NVIDIA-SMI has failed|No devices were found|Unable to determine the "
                    r"device handle")
"""nvidia-smi's own words when it finds no usable GPU: a measurement (none present), not
an unreadable file."""


@dataclass(frozen=True)
class GpuRow:
    """One GPU's line of the query, values by field name (units stripped)."""

    values: dict[str, str]

    def num(self, name: str) -> float | None:
        return number(self.values.get(name, ""))

    def text(self, name: str) -> str:
        return self.values.get(name, "").strip()

    @property
    def index(self) -> int:
        return int(self.num("index") or 0)


@dataclass
class Query:
    gpus: list[GpuRow] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    readable: bool = True
    """False when the file is neither the query CSV nor nvidia-smi saying it failed."""


def parse_query(text: str, file: str) -> Query:
    """Read ``nvidia-smi --query-gpu=... --format=csv,nounits`` (with its header)."""
    q = Query()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or "index" not in lines[0]:
        failed = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if FAILED.search(ln)]
        if failed:
            q.issues.append(Issue(file, failed[0][0], failed[0][1].strip()[:200]))
        else:
            q.readable = False
            q.issues.append(Issue(file, 1, "not nvidia-smi --query-gpu CSV with a header "
                                           "(no 'index' column)"))
        return q
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
    for lineno, row in enumerate(csv.reader(lines[1:], skipinitialspace=True), 2):
        if len(row) != len(header):
            q.issues.append(Issue(file, lineno, f"expected {len(header)} values, got "
                                                f"{len(row)}: {','.join(row)[:120]}"))
            continue
        q.gpus.append(GpuRow(dict(zip(header, (v.strip() for v in row), strict=True))))
    return q


@dataclass
class Topology:
    """GPU-GPU and GPU-NIC connection types, NIC columns named by their device."""

    gpus: list[str] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)
    links: dict[tuple[str, str], str] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)

    def nvlinks(self, a: str, b: str) -> int:
        """Bonded NVLinks between two GPUs (0: none)."""
        m = re.fullmatch(r"NV(\d+)", self.links.get((a, b), ""))
        return int(m[1]) if m else 0


def parse_topo(text: str, file: str) -> Topology:
    """Read ``nvidia-smi topo -m``."""
    t = Topology()
    legend = {m[1]: m[2] for m in map(LEGEND.match, text.splitlines()) if m}
    header: list[str] | None = None
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"\t|\s{2,}", line.rstrip())]
        if header is None:
            if any(c == "GPU0" for c in cells):
                header = cells
            continue
        if not cells or not re.fullmatch(r"(GPU\d+|NIC\d+|mlx\S+)", cells[0]):
            if cells and cells[0].startswith("Legend"):
                break
            continue
        for col, value in zip(header[1:], cells[1:], strict=False):
            if re.fullmatch(r"GPU\d+|NIC\d+|mlx\S+", col):
                t.links[(legend.get(cells[0], cells[0]), legend.get(col, col))] = value
        (t.gpus if cells[0].startswith("GPU") else t.nics).append(legend.get(cells[0],
                                                                             cells[0]))
    if header is None:
        t.issues.append(Issue(file, 1, "not nvidia-smi topo -m output (no GPU0 column)"))
    return t

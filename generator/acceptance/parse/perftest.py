"""perftest ``ib_write_bw`` client output, as linux-rdma/perftest prints it.

Format (``src/perftest_parameters.c`` ``ctx_print_test_info`` and ``perftest_parameters.h``
``RESULT_FMT_G`` / ``REPORT_FMT``; ``--report_gbits`` gives Gb/sec, without it MiB/sec,
``MB/sec`` in older releases)::

    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     Number of qps   : 1            Transport type : IB
     ...
     Link type       : IB
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     1048576    5000             392.11             391.87               0.046713
    ---------------------------------------------------------------------------------------

The ladder runs one test per rail; its files hold several outputs, each after a marker
line written by the ladder (``SECTION``) that says which rail and which two nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.acceptance.parse import Issue, number

SECTION = re.compile(r"^@@ podplan ib_write_bw (?P<fields>.*?) @@\s*$")
DEVICE = re.compile(r"Device\s*:\s*(\S+)")
HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+BW peak\[(?P<unit>[^\]]+)\]\s+"
                    r"BW average\[(?P<avg_unit>[^\]]+)\]")


@dataclass
class WriteBw:
    """One ``ib_write_bw`` client run: its device, link type and average bandwidth."""

    device: str | None = None
    link_type: str | None = None
    gbps: float | None = None
    bytes: int | None = None
    issues: list[Issue] = field(default_factory=list)


def to_gbps(value: float, unit: str) -> float:
    """perftest's units to Gb/s (its MiB and MB are both 2^20 bytes)."""
    if unit.startswith("Gb"):
        return value
    return value * 2**20 * 8 / 1e9


def parse_write_bw(text: str, file: str, first_line: int = 1) -> WriteBw:
    """Read one client output; the largest message size's BW average is the result."""
    out = WriteBw()
    unit: str | None = None
    best: tuple[int, float] | None = None
    for lineno, line in enumerate(text.splitlines(), first_line):
        if out.device is None and (m := DEVICE.search(line)):
            out.device = m[1]
        elif line.strip().startswith("Link type"):
            out.link_type = line.split(":", 1)[1].strip()
        elif m := HEADER.match(line):
            unit = m["avg_unit"]
        elif unit and (tokens := line.split()) and tokens[0].isdigit() and len(tokens) >= 4:
            avg = number(tokens[3])
            if avg is not None and (best is None or int(tokens[0]) >= best[0]):
                best = (int(tokens[0]), to_gbps(avg, unit))
        elif re.search(r"(Couldn't|Unable|[Ff]ailed|[Ee]rror)", line):
            out.issues.append(Issue(file, lineno, line.strip()[:200]))
    if best is None:
        out.issues.append(Issue(file, first_line, "no ib_write_bw result line (the test "
                                                   "did not run to the end)"))
    else:
        out.bytes, out.gbps = best
    return out


@dataclass(frozen=True)
class Section:
    """One rail's test inside a ladder file: the marker's fields and the tool's output."""

    fields: dict[str, str]
    text: str
    line: int


def sections(text: str) -> list[Section]:
    """Split a ladder file at its ``@@ podplan ib_write_bw key=value ... @@`` markers."""
    found: list[Section] = []
    current: dict[str, str] | None = None
    body: list[str] = []
    start = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if m := SECTION.match(line):
            if current is not None:
                found.append(Section(current, "\n".join(body), start))
            current = dict(kv.split("=", 1) for kv in m["fields"].split() if "=" in kv)
            body, start = [], lineno + 1
        elif current is not None:
            body.append(line)
    if current is not None:
        found.append(Section(current, "\n".join(body), start))
    return found

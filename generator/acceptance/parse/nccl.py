"""nccl-tests output (``all_reduce_perf`` and friends), as ``src/util.cu`` prints it.

Format (NVIDIA/nccl-tests, src/util.cu ``writeDeviceReport`` / ``writeResultHeader`` /
``writeBenchmarkLineBody`` / ``writeResultFooter``; older releases print the same table
without the version line, the Group field or the ``root`` column)::

    # nccl-tests version 2.17.1 nccl-headers=22704 nccl-library=22704
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 ...
    #
    # Using devices
    #  Rank  0 Group  0 Pid  12345 on     gpu001 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
    #
    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)        ...
      8589934592    2147483648     float     sum      -1    42010  204.47  357.83      0 ...
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 287.1
    # Collective test concluded: all_reduce_perf

Columns are read by the header's names, so the per-iteration columns (``-I 1``) and the
timestamp column (``-T``) do not shift anything. The first ``busbw`` is out-of-place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.acceptance.parse import Issue, number

RANK = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]*)\]\s+(?P<name>.*?)\s*$")
STARTING = re.compile(r"^# Collective test starting: (\S+?)(?:_perf)?\s*$")
OUT_OF_BOUNDS = re.compile(r"^# Out of bounds values\s*:\s*(\d+)")
AVG = re.compile(r"^# Avg bus bandwidth\s*:\s*(\S+)")


@dataclass(frozen=True)
class Rank:
    rank: int
    host: str
    device: int
    bus_id: str
    name: str


@dataclass(frozen=True)
class Row:
    """One message size: out-of-place and in-place bus bandwidth (GB/s) and wrong counts."""

    size: int
    busbw: float
    busbw_in_place: float | None
    wrong: int | None
    wrong_in_place: int | None
    line: int


@dataclass
class NcclReport:
    """One run of one nccl-tests binary."""

    op: str | None = None
    ranks: list[Rank] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    out_of_bounds: int | None = None
    avg_busbw: float | None = None
    issues: list[Issue] = field(default_factory=list)

    @property
    def hosts(self) -> list[str]:
        """Hosts in rank order, each once."""
        return list(dict.fromkeys(r.host for r in self.ranks))


def _columns(line: str) -> list[str] | None:
    names = line.lstrip("#").split()
    return names if "size" in names and "busbw" in names else None


def _row(tokens: list[str], cols: list[str], lineno: int) -> Row | None:
    if len(tokens) < len([c for c in cols if c != "timestamp"]) or not tokens[0].isdigit():
        return None
    bus = [i for i, c in enumerate(cols) if c == "busbw"]
    wrong = [i for i, c in enumerate(cols) if c == "#wrong"]
    out = number(tokens[bus[0]])
    if out is None:
        return None

    def at(idx: list[int], k: int) -> float | None:
        return number(tokens[idx[k]]) if len(idx) > k and idx[k] < len(tokens) else None

    def count(v: float | None) -> int | None:
        return None if v is None else int(v)

    return Row(size=int(tokens[cols.index("size")]), busbw=out, busbw_in_place=at(bus, 1),
               wrong=count(at(wrong, 0)), wrong_in_place=count(at(wrong, 1)), line=lineno)


def parse_nccl(text: str, file: str) -> NcclReport:
    """Read one nccl-tests output; lines from other ranks or tools are ignored."""
    rep = NcclReport()
    cols: list[str] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if m := STARTING.match(line):
            rep.op = m[1]
        elif m := RANK.match(line):
            rep.ranks.append(Rank(int(m["rank"]), m["host"], int(m["device"]), m["bus"],
                                  m["name"]))
        elif m := OUT_OF_BOUNDS.match(line):
            rep.out_of_bounds = int(m[1])
        elif m := AVG.match(line):
            rep.avg_busbw = number(m[1])
        elif line.startswith("#"):
            cols = _columns(line) or cols
        elif cols and (row := _row(line.split(), cols, lineno)):
            rep.rows.append(row)
        elif re.search(r"\b(failure|error|Error|ERROR)\b", line):
            rep.issues.append(Issue(file, lineno, line.strip()[:200]))
    if not rep.rows:
        rep.issues.append(Issue(file, None, "no nccl-tests results table (the run did not "
                                            "finish, or this is not nccl-tests output)"))
    return rep

"""``plan.lock.yaml``: written from a plan, read back line by line with located errors.

The file is YAML in one fixed layout (``yaml.safe_load`` reads it; the tests check that it
gives the same data), so it diffs one line per device and one line per cable::

    lock: 1
    cluster: NAME
    gpu: GPU                      # the catalog GPU the nodes were built with
    storage_drive_tb: 3.84        # the drive size of the built storage nodes
    changes:                      # the last change to identities, as plan notes
      - "..."
    networks: {fabric: CIDR, frontend: CIDR, mgmt: CIDR, oob: CIDR}
    rails: [CIDR, ...]            # the IPoIB subnet of each rail
    racks:
      r01: {kind: compute, row: 1, position: 1, pdus: 2}
    devices:
      gpu001: {role: compute, model: xe9680, rack: r01, u: 1, su: 1, slot: 1, oob: IP, ...}
    cables:                       # per switch (or the site network): port: device port
      ib-leaf-su01-r0:
        1/1: gpu001 mlx5_0
    retired:                      # removed devices: names and addresses not given out again
      gpu031: {oob: IP, mgmt: IP}
    freed:                        # only after a change that freed hardware (lock.freed)
      gpu031: {role: compute, model: xe9680, gpu: h100-sxm-80gb, rack: r02, u: 5, why: removed}

Entries are sorted by name, numbers compared as numbers (``gpu2 < gpu10``, port ``1/1/2 <
1/1/10``). Reading it back is ``lock.read``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache

from generator.plan.lock.model import LOCK_FORMAT
from generator.plan.models import ClusterPlan
from generator.render.files import commented_header

LOCK_FILE = "plan.lock.yaml"
EXPLAIN = [
    "plan.lock.yaml: what is already built. podplan plan keeps every device listed here",
    "(name, addresses, rack slot, switch ports, cables) and gives new devices new ones;",
    "podplan plan --fresh ignores this file. Commit it with the plan.",
    "devices: fabric is the rail-0 IPoIB address; rail r uses the same host number in rails[r].",
    "cables: per switch (or the site network), port: the device and port at the other end.",
    "retired: removed devices; their names and addresses are not given out again.",
]
_DIGITS = re.compile(r"(\d+)")
SITE = "site-network"


def lock_path(name: str) -> str:
    """The lock's path relative to the output directory."""
    return f"reports/{name}/{LOCK_FILE}"


@lru_cache(maxsize=65536)
def natural(text: str) -> tuple[object, ...]:
    """Sort key comparing digit runs as numbers: ``gpu2 < gpu10``, ``1/1/2 < 1/1/10``."""
    parts = _DIGITS.split(text)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


def _bare(address: str | None) -> str | None:
    return address.split("/", 1)[0] if address else None


def _flow(items: Iterable[tuple[str, object]]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in items if v is not None) + "}"


def lock_text(plan: ClusterPlan) -> str:
    """The lock of ``plan`` (deterministic: a pure function of the plan)."""
    out = [commented_header(plan.spec_file) + "".join(f"# {x}\n" for x in EXPLAIN) + "---"]
    out += [f"lock: {LOCK_FORMAT}", f"cluster: {plan.name}", f"gpu: {plan.sizing.gpu}",
            f"storage_drive_tb: {plan.storage.drive_tb:g}"]
    if plan.identity_changes:
        out.append("changes:")
        out += [f"  - {json.dumps(c, ensure_ascii=True)}" for c in plan.identity_changes]
    else:
        out.append("changes: []")
    net = plan.network
    nets = {"fabric": net.fabric_cidr, "frontend": net.frontend_cidr}
    nets.update({"mgmt": net.mgmt_cidr, "oob": net.oob_cidr})
    out.append(f"networks: {_flow(nets.items())}")
    out.append(f"rails: [{', '.join(net.rail_cidrs)}]")
    out += _section("racks", _rack_lines(plan))
    out += _section("devices", _device_lines(plan))
    out += _section("cables", _cable_lines(plan))
    retired = sorted(plan.retired, key=lambda r: natural(r.name))
    out += _section(
        "retired",
        [f"  {r.name}: {_flow(sorted(r.addresses.items()))}" for r in retired],
    )
    if plan.freed:
        out += _section("freed", _freed_lines(plan))
    return "\n".join(out) + "\n"


FREED_KEYS = ("role", "model", "gpu", "rack", "u", "why", "by", "pdus")


def _freed_lines(plan: ClusterPlan) -> list[str]:
    """The ``freed:`` entries (``lock.freed``), empty values left out."""
    out = []
    for f in plan.freed:
        items = [(k, getattr(f, k)) for k in FREED_KEYS]
        out.append(f"  {f.name}: {_flow((k, v) for k, v in items if v)}")
    return out


def _section(name: str, lines: list[str]) -> list[str]:
    return [f"{name}:", *lines] if lines else [f"{name}: {{}}"]


def _rack_lines(plan: ClusterPlan) -> list[str]:
    out = []
    for r in sorted(plan.racks, key=lambda r: natural(r.name)):
        pdus = sum(1 for s in r.slots if s.kind == "pdu")
        items = [("kind", r.kind), ("row", r.row), ("position", r.position), ("pdus", pdus)]
        out.append(f"  {r.name}: {_flow(items)}")
    return out


def _device_lines(plan: ClusterPlan) -> list[str]:
    rows: list[tuple[str, str]] = []
    for n in plan.nodes:
        a = n.addresses
        fabric = a.fabric[0].address if a.fabric else None
        items = [
            ("role", n.role), ("model", n.model), ("rack", n.rack), ("u", n.u), ("su", n.su),
            ("slot", n.slot), ("oob", _bare(a.bmc)), ("mgmt", _bare(a.mgmt)),
            ("frontend", _bare(a.frontend)), ("fabric", _bare(fabric)),
        ]  # fmt: skip
        rows.append((n.name, _flow(items)))
    for s in plan.switches:
        items = [
            ("role", f"{s.network}-{s.tier}"), ("model", s.model), ("rack", s.rack),
            ("u", s.u), ("su", s.su), ("oob", _bare(s.mgmt_address)),
        ]  # fmt: skip
        rows.append((s.name, _flow(items)))
    rows.sort(key=lambda r: natural(r[0]))
    return [f"  {name}: {text}" for name, text in rows]


def _cable_lines(plan: ClusterPlan) -> list[str]:
    by_b: dict[str, list[tuple[str, str]]] = {}
    for lk in plan.links:
        by_b.setdefault(lk.b, []).append((lk.b_port, f"{lk.a} {lk.a_port}"))
    out = []
    for b in sorted(by_b, key=natural):
        out.append(f"  {b}:")
        out += [f"    {port}: {far}" for port, far in sorted(by_b[b], key=lambda x: natural(x[0]))]
    return out

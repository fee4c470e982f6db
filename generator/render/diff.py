"""A plan-level diff: what regenerating changes in the cluster, not just in the files.

``podplan plan --diff`` compares the plan on disk (``reports/<name>/plan.yaml``,
``cabling.csv`` and ``bom.json`` as last written) with the new one and reports, in plan terms:

* devices added and removed (nodes, switches, and every other racked device such as PDUs);
* **identity moves**: a device that exists in both plans under the same name but whose
  management, out-of-band, front-end or fabric address, role, rack or rack unit changed, or
  one of whose ports now reaches a different peer (or the cable on it changed). For an
  existing cluster these must be none: the running hosts, ``/etc/hosts``, switch configs and
  the cabling on the floor all assume the old identities;
* cables added and removed;
* BOM lines whose quantity or extended price changes, and the capex total.

It works on the written documents (old and new alike), so it also reads plans written by an
older podplan, and it needs no ClusterPlan model (fast: plan.yaml is read by
``fastyaml.load``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from generator.render import fastyaml

Identity = dict[str, str]


@dataclass(frozen=True)
class Move:
    """One identity field of an existing device that changes."""

    device: str
    what: str
    old: str
    new: str


@dataclass
class PlanDiff:
    """Device, identity, cable and BOM changes between two plans."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    cables_added: int = 0
    cables_removed: int = 0
    bom: list[str] = field(default_factory=list)
    capex: tuple[float, float] | None = None

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.moves or self.cables_added
                    or self.cables_removed or self.bom) and (
            self.capex is None or self.capex[0] == self.capex[1])  # fmt: skip


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _put(out: dict[str, Identity], name: str, fields: dict[str, Any]) -> None:
    entry = out.setdefault(name, {})
    entry.update({k: t for k, v in fields.items() if (t := _text(v)) is not None})


def devices(doc: dict[str, Any]) -> dict[str, Identity]:
    """Every device of a plan document, by name, with the fields that identify it."""
    out: dict[str, Identity] = {}
    for n in doc.get("nodes") or []:
        a = n.get("addresses") or {}
        _put(out, n["name"], {"kind": f"{n.get('role')} node", "rack": n.get("rack"),
                              "U": n.get("u"), "management": a.get("mgmt"),
                              "out-of-band": a.get("bmc"), "front-end": a.get("frontend")})
        for fab in a.get("fabric") or []:
            _put(out, n["name"], {f"fabric {fab.get('device')}": fab.get("address")})
    for s in doc.get("switches") or []:
        _put(out, s["name"], {"kind": f"{s.get('network')} {s.get('tier')} switch",
                              "rack": s.get("rack"), "U": s.get("u"),
                              "management": s.get("mgmt_address")})
    for rack in doc.get("racks") or []:
        for slot in rack.get("slots") or []:
            if slot["device"] not in out:
                _put(out, slot["device"], {"kind": slot.get("kind"), "rack": rack.get("name"),
                                           "U": slot.get("u")})
    return out


Ends = dict[tuple[str, str], tuple[str, str]]  # (device, port) -> (peer "device port", cable)


def cable_ends(cabling_csv: str) -> Ends:
    """Both ends of every link in ``cabling.csv`` (with or without ``#`` header lines)."""
    rows = csv.reader(ln for ln in cabling_csv.splitlines() if not ln.startswith("#"))
    head = next(rows, [])
    if not {"a", "a_port", "b", "b_port"} <= set(head):
        return {}
    a, ap, b, bp = (head.index(c) for c in ("a", "a_port", "b", "b_port"))
    part = head.index("part_number") if "part_number" in head else head.index("cable")
    length = head.index("length_m") if "length_m" in head else None
    ends: Ends = {}
    for r in rows:
        cable = f"{r[part]} {r[length]}m" if length is not None else r[part]
        ends[(r[a], r[ap])] = (f"{r[b]} {r[bp]}", cable)
        ends[(r[b], r[bp])] = (f"{r[a]} {r[ap]}", cable)
    return ends


def _identity_moves(old: dict[str, Identity], new: dict[str, Identity]) -> list[Move]:
    moves = []
    for name in sorted(old.keys() & new.keys()):
        a, b = old[name], new[name]
        for what in sorted(a.keys() | b.keys()):
            if a.get(what) != b.get(what):
                moves.append(Move(name, what, a.get(what, "-"), b.get(what, "-")))
    return moves


def _port_moves(old: Ends, new: Ends, kept: set[str]) -> list[Move]:
    """Ports of devices in both plans whose peer or cable changes (not pure growth/shrink)."""
    moves = []
    for dev, port in sorted(old.keys() & new.keys()):
        if dev not in kept:
            continue
        (peer_a, cable_a), (peer_b, cable_b) = old[(dev, port)], new[(dev, port)]
        if peer_a != peer_b:
            moves.append(Move(dev, f"port {port}", peer_a, peer_b))
        elif cable_a != cable_b:
            moves.append(Move(dev, f"port {port} cable", cable_a, cable_b))
    return moves


def _links(ends: Ends) -> set[tuple[str, str]]:
    """Each link once, as its two ends in order."""
    links = set()
    for (d, p), (peer, _) in ends.items():
        me = f"{d} {p}"
        links.add((me, peer) if me < peer else (peer, me))
    return links


def _bom_lines(doc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """(quantity, extended USD) per category and catalog id. A line that one part number
    orders for several catalog ids (``uses``, since one fibre part number is one BOM line)
    is split back per id at its unit price, so outputs from before and after that change
    compare by the same keys."""
    out: dict[str, tuple[float, float]] = {}
    for line in doc.get("lines") or []:
        uses = line.get("uses") or {line.get("catalog_id") or line.get("part"): None}
        for item, used in uses.items():
            key = f"{line.get('category')} {item}"
            qty = float(line.get("quantity") or 0) if used is None else float(used)
            ext = (float(line.get("extended_usd") or 0) if used is None
                   else qty * float(line.get("unit_usd") or 0))
            had_qty, had_ext = out.get(key, (0.0, 0.0))
            out[key] = (had_qty + qty, had_ext + ext)
    return out


def _money(x: float) -> str:
    return f"{x:,.2f}"


def _qty(x: float) -> str:
    return f"{x:g}"


def bom_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per BOM line whose quantity or extended price changes."""
    a, b = _bom_lines(old), _bom_lines(new)
    out = []
    for key in sorted(a.keys() | b.keys()):
        (qa, ea), (qb, eb) = a.get(key, (0.0, 0.0)), b.get(key, (0.0, 0.0))
        if (qa, round(ea, 2)) != (qb, round(eb, 2)):
            out.append(f"{key}: quantity {_qty(qa)} -> {_qty(qb)}, extended "
                       f"{_money(ea)} -> {_money(eb)} USD ({eb - ea:+,.2f})")
    return out


def _capex(doc: dict[str, Any]) -> float:
    return float((doc.get("totals") or {}).get("capex_usd") or 0.0)


def diff_plans(old: tuple[str, str, str], new: tuple[str, str, str]) -> PlanDiff:
    """Compare two plans, each as the text of (plan.yaml, cabling.csv, bom.json); identical
    texts are not parsed (the usual re-run compares in no time)."""
    d = PlanDiff()
    kept: set[str] | None = None
    if old[0] != new[0]:
        old_dev = devices(fastyaml.load(old[0]) or {})
        new_dev = devices(fastyaml.load(new[0]) or {})
        kept = set(old_dev.keys() & new_dev.keys())
        d.added = [f"{new_dev[n].get('kind', 'device')} {n}" for n in sorted(new_dev.keys() - kept)]
        d.removed = [f"{old_dev[n].get('kind', 'device')} {n}"
                     for n in sorted(old_dev.keys() - kept)]  # fmt: skip
        d.moves = _identity_moves(old_dev, new_dev)
    if old[1] != new[1]:
        old_ends, new_ends = cable_ends(old[1]), cable_ends(new[1])
        if kept is None:  # same devices: every device with a port in both is kept
            kept = {dev for dev, _ in old_ends.keys() & new_ends.keys()}
        d.moves += _port_moves(old_ends, new_ends, kept)
        old_links, new_links = _links(old_ends), _links(new_ends)
        d.cables_added, d.cables_removed = len(new_links - old_links), len(old_links - new_links)
    if old[2] != new[2]:
        old_bom, new_bom = json.loads(old[2]), json.loads(new[2])
        d.bom = bom_changes(old_bom, new_bom)
        d.capex = (_capex(old_bom), _capex(new_bom))
    return d


def _capped(lines: list[str], limit: int | None) -> Iterable[str]:
    shown = lines if limit is None else lines[:limit]
    yield from shown
    if len(shown) < len(lines):
        yield f"    ... and {len(lines) - len(shown):,} more (--verbose lists all)"


def format_diff(d: PlanDiff, limit: int | None = 40) -> list[str]:
    """The diff as lines for people; ``limit`` caps each list (``None``: everything)."""
    moved = sorted({m.device for m in d.moves})
    out = [f"devices: {len(d.added):,} added, {len(d.removed):,} removed, "
           f"{len(moved):,} with identity moves"]
    out += _capped([f"  + {x}" for x in d.added], limit)
    out += _capped([f"  - {x}" for x in d.removed], limit)
    if d.moves:
        out.append("identity moves (existing devices whose address, slot or cabling changes):")
        by_device: dict[str, list[str]] = {}
        for m in d.moves:
            by_device.setdefault(m.device, []).append(f"{m.what} {m.old} -> {m.new}")
        out += _capped([f"  ~ {dev}: {'; '.join(by_device[dev])}" for dev in moved], limit)
    out.append(f"cables: {d.cables_added:,} added, {d.cables_removed:,} removed")
    if d.bom:
        out.append("bill of materials:")
        out += _capped([f"  ~ {x}" for x in d.bom], limit)
    if d.capex is None:
        out.append("bill of materials: unchanged")
    else:
        a, b = d.capex
        out.append(f"capex: {_money(a)} -> {_money(b)} USD ({b - a:+,.2f})")
    return out

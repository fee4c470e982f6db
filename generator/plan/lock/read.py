"""``plan.lock.yaml`` read back line by line (the layout ``lock.text`` writes), every
refusal located at its line.

A dedicated line reader instead of a YAML parser: the 64,000 cables of a 2,048-node plan
read in a fraction of a second (the cable block is checked by one regular expression and
only searched line by line when it does not match), and an error names the line and field.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable

from generator.plan.lock.freed import read_freed
from generator.plan.lock.model import (
    ADDRESS_KEYS,
    LOCK_FORMAT,
    NODE_ROLES,
    RACK_KINDS,
    SWITCH_ROLES,
    Cable,
    Lock,
    LockedDevice,
    LockedRack,
)
from generator.plan.lock.reader import NAME, Reader
from generator.plan.lock.text import SITE
from generator.plan.network.fabric import SU_NODES

_CABLE = re.compile(rf"    ({NAME}): ({NAME}) ({NAME})")
_CABLE_BLOCK = re.compile(rf"(?:  {NAME}:\n(?:    {NAME}: {NAME} {NAME}\n)*)*")
_CABLE_ROWS = re.compile(rf"^  ({NAME}):$|^    ({NAME}): ({NAME}) ({NAME})$", re.M)


def parse_lock(text: str, path: str) -> Lock:
    """Read a lock; any deviation from the layout or a bad value is a located error."""
    r = Reader(text, path)
    i = _start(r)
    seen: set[str] = set()
    handlers: dict[str, Callable[[Reader, int, str, int], int]] = {
        "lock": _format, "cluster": _cluster, "gpu": _gpu, "storage_drive_tb": _drive,
        "changes": _changes,
        "networks": _networks,
        "rails": _rails, "racks": _racks, "devices": _devices, "cables": _cables,
        "retired": _retired, "freed": _freed,
    }  # fmt: skip
    n = len(r.lines)
    while i < n:
        raw = r.lines[i]
        if not raw.strip() or raw.startswith("#"):
            i += 1
            continue
        key, sep, value = raw.partition(":")
        if not sep or raw.startswith(" ") or key not in handlers or key in seen:
            what = "repeated section" if key in seen else "unexpected line"
            r.fail(i + 1, key.strip(), f"{what}: {raw.strip()[:60]!r}", ", ".join(handlers))
        seen.add(key)
        r.lock.lines[key] = i + 1
        i = handlers[key](r, i, value.strip(), n)
    missing = [k for k in handlers if k not in seen and k not in OPTIONAL]
    if missing:
        r.fail(
            len(r.lines),
            missing[0],
            "section missing (the file is cut short, or a section was deleted)",
            ", ".join(handlers),
        )
    _check_references(r)
    return r.lock


def _start(r: Reader) -> int:
    for i, raw in enumerate(r.lines):
        if raw.strip() == "---":
            return i + 1
        if raw.strip() and not raw.startswith("#"):
            break
    r.fail(1, "", "not a plan lock (no '---' after the header comments)")
    return 0


def _block(r: Reader, i: int, n: int) -> int:
    """Index after the indented lines following line ``i``."""
    j = i + 1
    lines = r.lines
    while j < n and (lines[j].startswith(" ") or not lines[j]):
        j += 1
    return j


def _format(r: Reader, i: int, value: str, n: int) -> int:
    if value != str(LOCK_FORMAT):
        r.fail(i + 1, "lock", f"format {value!r} is not one this podplan reads", str(LOCK_FORMAT))
    return i + 1


OPTIONAL = ("gpu", "storage_drive_tb", "freed")
"""Sections a lock written by an older podplan lacks (``freed``: written only when the
last change freed hardware)."""


def _gpu(r: Reader, i: int, value: str, n: int) -> int:
    r.lock.gpu = r.token(value, i + 1, "gpu")
    return i + 1


def _drive(r: Reader, i: int, value: str, n: int) -> int:
    try:
        tb = float(value)
    except ValueError:
        tb = -1.0
    if not 0 < tb < 1000:
        r.fail(i + 1, "storage_drive_tb", f"{value!r} is not a drive size in TB")
    r.lock.storage_drive_tb = tb
    return i + 1


def _cluster(r: Reader, i: int, value: str, n: int) -> int:
    r.lock.cluster = r.token(value, i + 1, "cluster")
    return i + 1


def _changes(r: Reader, i: int, value: str, n: int) -> int:
    if value == "[]":
        return i + 1
    end = _block(r, i, n)
    for j in range(i + 1, end):
        raw = r.lines[j]
        if not raw:
            continue
        try:
            if not raw.startswith("  - "):
                raise ValueError
            note = json.loads(raw[4:])
            if not isinstance(note, str):
                raise ValueError
        except ValueError:
            r.fail(j + 1, "changes", "expected '  - \"text\"'")
        r.lock.changes.append(note)
    return end


def _networks(r: Reader, i: int, value: str, n: int) -> int:
    items = r.flow(value, i + 1, "networks", ("fabric", "frontend", "mgmt", "oob"))
    for key, cidr in items.items():
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError:
            r.fail(i + 1, f"networks.{key}", f"{cidr!r} is not an IPv4 network")
    if len(items) != 4:
        r.fail(i + 1, "networks", "all four networks are needed", "fabric, frontend, mgmt, oob")
    r.lock.networks = items
    return i + 1


def _rails(r: Reader, i: int, value: str, n: int) -> int:
    if not (value.startswith("[") and value.endswith("]")):
        r.fail(i + 1, "rails", f"expected [CIDR, ...], found {value!r}")
    body = value[1:-1].strip()
    for k, cidr in enumerate(body.split(", ") if body else []):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError:
            r.fail(i + 1, f"rails[{k}]", f"{cidr!r} is not an IPv4 network")
        r.lock.rails.append(cidr)
    return i + 1


def _entries(r: Reader, i: int, value: str, n: int, section: str) -> tuple[int, list[int]]:
    """Line indexes of the ``  name: {...}`` entries of a mapping section."""
    if value == "{}":
        return i + 1, []
    if value:
        r.fail(i + 1, section, f"expected a block of entries, found {value!r}")
    end = _block(r, i, n)
    return end, [j for j in range(i + 1, end) if r.lines[j]]


def _entry(r: Reader, j: int, section: str) -> tuple[str, str]:
    raw = r.lines[j]
    if not raw.startswith("  ") or raw.startswith("   "):
        r.fail(j + 1, section, f"expected '  name: {{...}}', found {raw.strip()[:60]!r}")
    name, sep, rest = raw[2:].partition(": ")
    if not sep:
        r.fail(j + 1, section, f"expected '  name: {{...}}', found {raw.strip()[:60]!r}")
    return r.token(name, j + 1, section), rest


def _racks(r: Reader, i: int, value: str, n: int) -> int:
    end, rows = _entries(r, i, value, n, "racks")
    spots: dict[tuple[int, int], str] = {}
    for j in rows:
        name, rest = _entry(r, j, "racks")
        where = f"racks.{name}"
        f = r.flow(rest, j + 1, where, ("kind", "row", "position", "pdus"))
        if f.get("kind") not in RACK_KINDS:
            r.fail(j + 1, f"{where}.kind", f"{f.get('kind')!r}", ", ".join(RACK_KINDS))
        row = r.number(f.get("row", ""), j + 1, f"{where}.row")
        pos = r.number(f.get("position", ""), j + 1, f"{where}.position")
        pdus = f.get("pdus", "")
        if not pdus.isdigit():
            r.fail(j + 1, f"{where}.pdus", f"{pdus!r} is not a count")
        if name in r.lock.racks or (row, pos) in spots:
            what = "listed twice" if name in r.lock.racks else f"stands where {spots[(row, pos)]}"
            r.fail(j + 1, where, f"{name} {what}")
        spots[(row, pos)] = name
        r.lock.racks[name] = LockedRack(name, f["kind"], row, pos, int(pdus), j + 1)
        r.lock.lines[where] = j + 1
    return end


_DEVICE_KEYS = ("role", "model", "rack", "u", "su", "slot", *ADDRESS_KEYS)


def _devices(r: Reader, i: int, value: str, n: int) -> int:
    end, rows = _entries(r, i, value, n, "devices")
    roles = (*NODE_ROLES, *SWITCH_ROLES)
    for j in rows:
        name, rest = _entry(r, j, "devices")
        where = f"devices.{name}"
        f = r.flow(rest, j + 1, where, _DEVICE_KEYS)
        if f.get("role") not in roles:
            r.fail(j + 1, f"{where}.role", f"{f.get('role')!r} is not a role", ", ".join(roles))
        if name in r.lock.devices:
            r.fail(j + 1, where, f"{name} is listed twice")
        su = r.number(f["su"], j + 1, f"{where}.su") if "su" in f else None
        slot = r.number(f["slot"], j + 1, f"{where}.slot") if "slot" in f else None
        if slot is not None and slot > SU_NODES:
            r.fail(j + 1, f"{where}.slot", f"{slot} is not a position in a scalable unit", "1-32")
        addrs = {k: r.address(f[k], j + 1, f"{where}.{k}", k, name) for k in ADDRESS_KEYS if k in f}
        r.lock.devices[name] = LockedDevice(
            name,
            f["role"],
            r.token(f.get("model", ""), j + 1, f"{where}.model"),
            r.token(f.get("rack", ""), j + 1, f"{where}.rack"),
            r.number(f.get("u", ""), j + 1, f"{where}.u"),
            addrs,
            su,
            j + 1,
            slot,
        )
        r.lock.lines[where] = j + 1
    return end


def _cables(r: Reader, i: int, value: str, n: int) -> int:
    if value == "{}":
        return i + 1
    end = _block(r, i, n)
    if _fast_cables(r, i + 1, end):
        return end
    _check_cables(r, i, end)
    return end


def _fast_cables(r: Reader, start: int, end: int) -> bool:
    """The whole block checked by one regular expression and split by another; False
    (nothing kept) when it does not match or repeats a port, for ``_check_cables`` to
    locate why."""
    lines = r.lines[start:end]
    while lines and not lines[-1]:
        lines.pop()
    block = "\n".join(lines) + "\n"
    if not _CABLE_BLOCK.fullmatch(block):
        return False
    cables, lines_of = r.lock.cables, r.lock.lines
    switch = ""
    for j, (head, port, a, a_port) in enumerate(_CABLE_ROWS.findall(block), start=start + 1):
        if head:
            switch = head
            lines_of[f"cables.{switch}"] = j
        else:
            cables.append(Cable(a, a_port, switch, port, j))
    ends = {(c.a, c.a_port) for c in cables}
    if len(ends) != len(cables) or len(set(map(_b_end, cables))) != len(cables):
        cables.clear()
        return False
    return True


def _b_end(c: Cable) -> tuple[str, str]:
    return c.b, c.b_port


def _check_cables(r: Reader, i: int, end: int) -> None:
    """Line by line, naming the first line that is wrong."""
    lines, cables = r.lines, r.lock.cables
    switch = ""
    ports: set[str] = set()
    ends: dict[tuple[str, str], int] = {}
    cable = _CABLE.fullmatch
    for j in range(i + 1, end):
        raw = lines[j]
        if raw.startswith("    "):
            m = cable(raw)
            if not (switch and m):
                r.fail(
                    j + 1,
                    f"cables.{switch}",
                    f"expected '    port: device port', found {raw.strip()[:60]!r}",
                )
            port, a, a_port = m.groups()  # type: ignore[union-attr]
            if port in ports or (a, a_port) in ends:
                dup = port if port in ports else f"{a} {a_port}"
                r.fail(j + 1, f"cables.{switch}.{port}", f"{dup} is cabled twice")
            ports.add(port)
            ends[(a, a_port)] = j + 1
            cables.append(Cable(a, a_port, switch, port, j + 1))
        elif raw.startswith("  ") and raw.endswith(":") and not raw.startswith("   "):
            switch = r.token(raw[2:-1], j + 1, "cables")
            ports = set()
            r.lock.lines[f"cables.{switch}"] = j + 1
        elif raw:
            r.fail(
                j + 1,
                "cables",
                f"expected '  switch:' or '    port: device port', found {raw.strip()[:60]!r}",
            )


def _retired(r: Reader, i: int, value: str, n: int) -> int:
    end, rows = _entries(r, i, value, n, "retired")
    for j in rows:
        name, rest = _entry(r, j, "retired")
        where = f"retired.{name}"
        f = r.flow(rest, j + 1, where, ADDRESS_KEYS)
        if name in r.lock.devices or name in r.lock.retired:
            r.fail(j + 1, where, f"{name} is both a device and retired, or retired twice")
        r.lock.retired[name] = {
            k: r.address(v, j + 1, f"{where}.{k}", k, name) for k, v in f.items()
        }
        r.lock.lines[where] = j + 1
    return end


def _freed(r: Reader, i: int, value: str, n: int) -> int:
    end, rows = _entries(r, i, value, n, "freed")
    for j in rows:
        name, rest = _entry(r, j, "freed")
        r.lock.freed.append(read_freed(r, j, name, rest))
        r.lock.lines[f"freed.{name}"] = j + 1
    return end


def _check_references(r: Reader) -> None:
    """Racks named by devices exist; cables join known devices (or a rack's PDU)."""
    lock = r.lock
    for d in lock.devices.values():
        if d.rack not in lock.racks:
            r.fail(d.line, f"devices.{d.name}.rack", f"rack {d.rack} is not under racks:")
    pdus = {
        f"{rack.name}-pdu-{chr(ord('a') + k)}"
        for rack in lock.racks.values()
        for k in range(rack.pdus)
    }
    for c in lock.cables:
        if c.b != SITE and c.b not in lock.devices:
            r.fail(c.line, f"cables.{c.b}", f"{c.b} is not under devices:")
        if c.a not in lock.devices and c.a not in pdus:
            r.fail(c.line, f"cables.{c.b}.{c.b_port}", f"{c.a} is not under devices: or a PDU")

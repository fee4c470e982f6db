"""Freed hardware: what the last change against the plan lock took out of service.

The change notes name removed and replaced devices in prose; decommissioning is ticketed
per box, so the plan also lists them as data (``ClusterPlan.freed``, plan.yaml's ``freed``,
the report's "Freed hardware" table): every device removed (its model, rack and U as
built), every device replaced by another model under the same name (a head server grown
past its model, an S5232F-ON back-end switch swapped for a Z9264F-ON), every GPU server of
a ``hardware.gpu`` change (the BOM buys them all again), and every rack emptied and removed
with its PDUs.

Like the change notes, the list describes the last change and is kept in the lock
(``freed:``, written only when it has entries): a re-plan that changes nothing keeps it, so
running ``podplan plan`` twice writes the same files; the next change replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from generator.plan.lock.model import Lock, LockedDevice
from generator.plan.lock.reader import Reader
from generator.plan.lock.text import FREED_KEYS, natural
from generator.plan.models import FreedDevice

GPU_ROLES = ("compute", "spare")


class Current(Protocol):
    """A device of the new plan as ``changes.Now`` records it (model only is read)."""

    @property
    def model(self) -> str: ...


def freed_hardware(
    lock: Lock,
    now: Mapping[str, Current],
    standing: set[str],
    gpu: tuple[str, str] | None = None,
) -> list[FreedDevice]:
    """Devices of ``lock`` the new plan removes or replaces, and its racks not ``standing``;
    ``gpu``: (built, planned) GPU ids when they differ."""
    out = []
    for name, d in lock.devices.items():
        cur = now.get(name)
        if cur is None:
            out.append(_device(lock, d, "removed"))
        elif cur.model != d.model:
            out.append(_device(lock, d, "replaced", cur.model))
        elif gpu and d.role in GPU_ROLES:
            out.append(_device(lock, d, "replaced", gpu[1]))
    for name, r in lock.racks.items():
        if name not in standing:
            out.append(FreedDevice(name=name, role="rack", model=r.kind, rack=name,
                                   why="removed", pdus=r.pdus))
    return sorted(out, key=lambda f: natural(f.name))


def _device(lock: Lock, d: LockedDevice, why: str, by: str = "") -> FreedDevice:
    return FreedDevice.model_validate({
        "name": d.name, "role": d.role, "model": d.model, "rack": d.rack, "u": d.u,
        "why": why, "by": by, "gpu": lock.gpu if d.role in GPU_ROLES else "",
    })


def read_freed(r: Reader, j: int, name: str, rest: str) -> FreedDevice:
    """One ``freed:`` entry of the lock, checked (a located error otherwise)."""
    where = f"freed.{name}"
    f = r.flow(rest, j + 1, where, FREED_KEYS)
    if f.get("why") not in ("removed", "replaced"):
        r.fail(j + 1, f"{where}.why", f"{f.get('why')!r}", "removed, replaced")
    for key in ("role", "model", "rack"):
        r.token(f.get(key, ""), j + 1, f"{where}.{key}")
    return FreedDevice(
        name=name,
        role=f["role"],
        model=f["model"],
        rack=f["rack"],
        u=r.number(f["u"], j + 1, f"{where}.u") if "u" in f else 0,
        why=f["why"],  # type: ignore[arg-type]
        by=r.token(f["by"], j + 1, f"{where}.by") if "by" in f else "",
        gpu=r.token(f["gpu"], j + 1, f"{where}.gpu") if "gpu" in f else "",
        pdus=r.number(f["pdus"], j + 1, f"{where}.pdus") if "pdus" in f else 0,
    )

"""The locked rack placer's zone rules (``generator.plan.lock.racks``, ``lock.zones``): a
zone's leaf pair stays together next to its hosts, and new infrastructure racks hold room
for one."""

from __future__ import annotations

from generator.plan.facility.racks import Budget, Device, RackLayout
from generator.plan.lock.model import Lock, LockedDevice, LockedRack
from generator.plan.lock.racks import LockedPlacer

BUDGET = Budget(power_kw=20.0, units=10)  # U1-U9 under a 1U OOB switch, no reserve
OOB = Device("oob", "switch", 1, 0.1)


def _lock() -> Lock:
    """r01: an infrastructure rack built with a 7U box at U1 (U8-U9 free)."""
    big = LockedDevice("big01", "storage", "box", "r01", 1)
    return Lock(
        path="plan.lock.yaml",
        cluster="c",
        networks={},
        rails=[],
        racks={"r01": LockedRack("r01", "infrastructure", 1, 1, 2)},
        devices={"big01": big},
        cables=[],
        retired={},
        changes=[],
    )


def _placer(lock: Lock) -> LockedPlacer:
    return LockedPlacer(lock, BUDGET, OOB, 4, 40, lambda r: 2, hold=(2, 0.8, 2))


def _where(racks: list[RackLayout]) -> dict[str, tuple[str, int]]:
    return {d.name: (r.name, d.u) for r in racks for d in r.devices}


def _infra(*devices: Device) -> list[tuple[Device, tuple[str, int]]]:
    return [(d, ("infrastructure", 0)) for d in devices]


def test_a_zone_pair_that_does_not_fit_its_rack_stays_together_in_a_new_one() -> None:
    placer = _placer(_lock())
    placer.prefer = {"fe-leaf-03": "r01", "fe-leaf-04": "r01"}
    big = Device("big01", "node", 7, 1.0, model="box")
    login = Device("login02", "node", 1, 0.5)
    leaves = [Device(f"fe-leaf-0{i}", "switch", 1, 0.4) for i in (3, 4)]
    where = _where(placer.place(_infra(big, login, *leaves)))
    assert where["login02"] == ("r01", 8)  # one U left in r01: not room for the pair
    assert where["fe-leaf-03"] == ("r02", 1) and where["fe-leaf-04"] == ("r02", 2)


def test_a_new_infrastructure_rack_holds_room_for_a_leaf_pair() -> None:
    placer = _placer(_lock())
    big = Device("big01", "node", 7, 1.0, model="box")
    hosts = [Device(f"pscale{i:02d}", "node", 1, 0.5) for i in range(1, 12)]
    where = _where(placer.place(_infra(big, *hosts)))
    in_r02 = sorted(u for name, (rack, u) in where.items() if rack == "r02")
    assert in_r02 == list(range(1, 8))  # U8-U9 held for a zone's pair
    placer = _placer(_lock())
    placer.prefer = {"fe-leaf-03": "r02", "fe-leaf-04": "r02"}
    leaves = [Device(f"fe-leaf-0{i}", "switch", 1, 0.4) for i in (3, 4)]
    where = _where(placer.place(_infra(big, *hosts, *leaves)))
    assert where["fe-leaf-03"] == ("r02", 8) and where["fe-leaf-04"] == ("r02", 9)

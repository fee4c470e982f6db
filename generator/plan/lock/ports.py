"""Cables of a locked plan: every cable the design still has stays on its ports.

The design (fabric, front end, side networks, racks) decides which devices a cable joins;
the lock decides the ports. Matching:

* a host port (``gpu001 mlx5_0``, ``head01 fe1``, ``r01-pdu-a net``) has one cable: it keeps
  its locked switch port while the design still sends it to that switch (a subnet-manager
  port, ``ib0``, may sit on any fabric switch, so it stays wherever it is);
* between two switches (or a switch and the site network) the design asks for some number of
  cables: the locked ones between the same two devices are kept, lowest ports first, up to
  that number.

A kept port must still exist on the device and be of the same cage type as the design's port.
Every other cable gets the design's ports when they are free, else the lowest free port of
the same cage type on that device (a removed node's port, a spine port freed by re-cabling).
What moved is reported by ``changes``.
"""

from __future__ import annotations

from functools import cached_property
from operator import attrgetter

from generator.plan.catalog_models import SwitchModel
from generator.plan.lock.model import Cable, Lock
from generator.plan.lock.text import natural
from generator.plan.network.ethernet import eth_port
from generator.plan.network.fabric import switch_port
from generator.plan.network.media import RawLink

SITE = "site-network"
_ENDS = attrgetter("a", "a_port", "b", "b_port")
FLOATING = {"ib0"}  # subnet-manager ports: any fabric switch will do
MGMT_PORT = "mgmt"  # a switch's management port (out of band): one cable, like a host port


class PortSpace:
    """Port names in front-panel order and the cage type of each, per switch."""

    def __init__(self, models: dict[str, SwitchModel]) -> None:
        self.models = models
        self._by_model: dict[str, tuple[list[str], dict[str, str]]] = {}
        self._cages: dict[str, dict[str, str]] = {}

    def ports(self, device: str) -> tuple[list[str], dict[str, str]] | None:
        model = self.models.get(device)
        if model is None:
            return None
        got = self._by_model.get(model.id)
        if got is None:
            last = model.ports + model.uplink_ports
            if model.kind == "infiniband":
                names = [switch_port(i, model.ports_per_cage) for i in range(1, last + 1)]
            else:
                names = [eth_port(i) for i in range(1, last + 1)]
            cages = {n: model.cage_of_port(i).cage for i, n in enumerate(names, start=1)}
            got = self._by_model[model.id] = (names, cages)
        return got

    def cage(self, device: str, port: str) -> str | None:
        cages = self._cages.get(device)
        if cages is None:
            got = self.ports(device)
            cages = self._cages[device] = got[1] if got else {}
        return cages.get(port)


class _Ports:
    """Which (device, port) pairs are taken while cables are matched."""

    def __init__(self, space: PortSpace) -> None:
        self.space = space
        self.used: set[tuple[str, str]] = set()
        self.reserved: frozenset[tuple[str, str]] = frozenset()

    def ok(self, device: str, port: str, cage: str) -> bool:
        if (device, port) in self.used:
            return False
        if device == SITE:
            return True
        return self.space.cage(device, port) == cage

    def lowest(self, device: str, cage: str, network: str) -> str:
        if device == SITE:
            k = 1
            while (SITE, f"{network}-{k}") in self.used:
                k += 1
            return f"{network}-{k}"
        got = self.space.ports(device)
        assert got is not None
        names, cages = got
        spare = None
        for name in names:
            if cages[name] == cage and (device, name) not in self.used:
                if (device, name) not in self.reserved:
                    return name
                spare = spare or name
        if spare is None:  # the design counts ports: this cannot happen
            raise AssertionError(f"{device} has no free {cage} port")
        return spare


def reconcile(
    raws: list[RawLink],
    lock: Lock,
    space: PortSpace,
    reserved: frozenset[tuple[str, str]] = frozenset(),
) -> set[str]:
    """Put ``raws`` on their locked ports where the design allows; returns the networks
    whose links now differ from the design's ports. ``reserved``: ports the design keeps
    free (growth slots), used by other cables only when nothing else is free."""
    keys = list(map(_ENDS, raws))
    if lock.cable_keys.issuperset(keys):  # every cable where the lock has it: nothing to do
        return set()
    before = [(lk.a_port, lk.b, lk.b_port) for lk in raws]
    m = _Matcher(lock, space)
    m.ports.reserved = reserved
    floating = [lk for lk in raws if lk.a_port in FLOATING and lk.a not in space.models]
    m.match([lk for lk in raws if not (lk.a_port in FLOATING and lk.a not in space.models)])
    # subnet-manager ports last: they stay on their locked switch only where the design
    # leaves that port free (a leaf that fills up with nodes pushes them elsewhere)
    m.match(floating)
    return {
        lk.network
        for lk, was in zip(raws, before, strict=True)
        if (lk.a_port, lk.b, lk.b_port) != was
    }


def _site_network(lk: RawLink) -> str:
    return lk.b_port.rsplit("-", 1)[0] if lk.b == SITE else lk.network


class _Matcher:
    """Locked cables by their ends, and the ports taken so far."""

    def __init__(self, lock: Lock, space: PortSpace) -> None:
        self.space = space
        self.lock = lock
        self.ports = _Ports(space)
        self.exact = lock.cable_keys
        self.consumed: set[tuple[str, str, str, str]] = set()

    @cached_property
    def by_host(self) -> dict[tuple[str, str], Cable]:
        return {(c.a, c.a_port): c for c in self.lock.cables}

    @cached_property
    def by_pair(self) -> dict[tuple[str, str], list[Cable]]:
        """Locked cables between two switches (or a switch and the site), lowest ports first."""
        out: dict[tuple[str, str], list[Cable]] = {}
        for c in self.lock.cables:
            if c.a in self.space.models and c.a_port != MGMT_PORT:
                out.setdefault((c.a, c.b), []).append(c)
        for cables in out.values():
            cables.sort(key=lambda c: (natural(c.a_port), natural(c.b_port)))
        return out

    def host_end(self, lk: RawLink) -> bool:
        """The a end is a port with one cable of its own: a host's, a PDU's, a switch's
        management port."""
        return lk.a not in self.space.models or lk.a_port == MGMT_PORT

    def match(self, links: list[RawLink]) -> None:
        """The same cable first, then other locked ports, then the design's where free,
        then the lowest free ones."""
        used = self.ports.used
        todo = []
        for lk in links:
            key = (lk.a, lk.a_port, lk.b, lk.b_port)
            if (
                key in self.exact
                and (lk.a, lk.a_port) not in used
                and (lk.b, lk.b_port) not in used
            ):
                used.add((lk.a, lk.a_port))
                used.add((lk.b, lk.b_port))
                self.consumed.add(key)
            else:
                todo.append(lk)
        if not todo:
            return
        todo = [lk for lk in todo if not (self.host_end(lk) and self.keep(lk))]
        todo = [lk for lk in todo if self.host_end(lk) or not self.keep(lk)]
        rest = []
        for lk in todo:
            if (lk.a, lk.a_port) not in used and (lk.b, lk.b_port) not in used:
                self.claim(lk, lk.a_port, lk.b, lk.b_port)
            else:
                rest.append(lk)
        for lk in rest:
            a_port = lk.a_port
            if not self.host_end(lk) and (lk.a, a_port) in used:
                a_port = self.ports.lowest(lk.a, lk.a_cage, lk.network)
            b_port = lk.b_port
            if (lk.b, b_port) in used:
                b_port = self.ports.lowest(lk.b, lk.b_cage, _site_network(lk))
            self.claim(lk, a_port, lk.b, b_port)

    def keep(self, lk: RawLink) -> bool:
        ports, space = self.ports, self.space
        if self.host_end(lk):
            c = self.by_host.get((lk.a, lk.a_port))
            if c is None or c[:4] in self.consumed:
                return False
            floating = lk.a_port in FLOATING
            same = c.b == lk.b or (floating and c.b in space.models)
            cage = space.cage(c.b, c.b_port) if floating else lk.b_cage
            if same and cage is not None and ports.ok(c.b, c.b_port, cage):
                self.claim(lk, lk.a_port, c.b, c.b_port)
                return True
            return False
        for c in self.by_pair.get((lk.a, lk.b), ()):
            key = c[:4]
            reserved = self.ports.reserved  # growth slots: a kept uplink moves off them
            if key in self.consumed or (lk.a, c.a_port) in reserved or (lk.b, c.b_port) in reserved:
                continue
            if ports.ok(lk.a, c.a_port, lk.a_cage) and ports.ok(lk.b, c.b_port, lk.b_cage):
                self.consumed.add(key)
                self.claim(lk, c.a_port, lk.b, c.b_port)
                return True
        return False

    def claim(self, lk: RawLink, a_port: str, b: str, b_port: str) -> None:
        space = self.space
        lk.a_port, lk.b, lk.b_port = a_port, b, b_port
        if not self.host_end(lk):
            lk.a_cage = space.cage(lk.a, a_port) or lk.a_cage
        if b == SITE:
            lk.b_cage = lk.a_cage
        else:
            lk.b_cage = space.cage(b, b_port) or lk.b_cage
        self.ports.used.add((lk.a, a_port))
        self.ports.used.add((b, b_port))

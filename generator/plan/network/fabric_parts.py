"""Which InfiniBand switch and host adapter the compute fabric is built from.

The fabric follows the GPU node's compute NIC, read from the catalog: the server's
``east_west_nic`` names a NIC whose ``ib_generation`` (HDR 200 Gb/s on the DGX A100's
ConnectX-6, NDR 400 Gb/s on ConnectX-7) picks the switch family, and the switch's radix
then sizes the scalable unit (``fabric_shape``: 64-port QM9790 -> SUs of 32 nodes, the DGX
H100 SuperPOD RA; 40-port QM8790 -> SUs of 20 nodes, the DGX A100 SuperPOD RA, S65). The
default is the first externally managed switch of that generation in ``switches.yaml``:
the subnet manager runs on UFM appliances or the head nodes (``fabric.subnet_manager``),
as in both RAs. The subnet-manager hosts get the fabric generation's single-port HCA.

``fabric.switch`` pins a switch. One of another generation than the nodes' NICs is refused
rather than designed: an NDR switch can serve HDR adapters only through twin-port OSFP to
2x QSFP56 splitter cables (MCP7Y60-H, S69), running every port at HDR, which halves the
switch's bandwidth and changes every cable of the fabric; an HDR switch cannot run NDR at
all. Neither is a design podplan prices, so the spec error says what would fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.catalog.models import Server
from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import NicModel, PlanCatalog, SwitchModel

DEFAULT_GENERATION = "NDR"
"""The generation of a server whose NIC names none (an Ethernet-only catalog entry)."""


@dataclass(frozen=True)
class FabricParts:
    """The compute fabric's switch model, the GPU nodes' NIC and the SM hosts' HCA."""

    switch: SwitchModel
    node_nic: NicModel
    host_hca: NicModel

    @property
    def generation(self) -> str:
        return self.switch.ib_generation or DEFAULT_GENERATION


def _ib_switches(pc: PlanCatalog) -> list[SwitchModel]:
    return [s for s in pc.switches.values() if s.kind == "infiniband"]


def _generation(nic: NicModel) -> str:
    return nic.ib_generation or DEFAULT_GENERATION


def _host_hca(pc: PlanCatalog, generation: str, node_nic: NicModel) -> NicModel:
    """The single-port HCA of this generation for UFM / opensm hosts (the node's own NIC
    when it is one)."""
    if node_nic.ports == 1 and _generation(node_nic) == generation:
        return node_nic
    for nic in pc.nics.values():
        if nic.ib_generation == generation and nic.ports == 1:
            return nic
    raise AssertionError(f"nics.yaml has no single-port {generation} HCA")


def _refuse(pinned: str, why: str, hint: str, allowed: list[str]) -> PodplanError:
    return PodplanError(
        "the pinned fabric switch does not fit the GPU nodes",
        problems=[
            Problem(
                path="fabric.switch",
                message=f"{pinned!r}: {why}",
                hint=f"{hint}; allowed: {', '.join(allowed)}",
            )
        ],
    )


def fabric_parts(pc: PlanCatalog, server: Server, pinned: str | None) -> FabricParts:
    """The fabric switch, node NIC and SM-host HCA for ``server`` (see module docstring)."""
    node_nic = pc.nics[server.east_west_nic]
    gen = _generation(node_nic)
    fits = [s for s in _ib_switches(pc) if (s.ib_generation or DEFAULT_GENERATION) == gen]
    allowed = [s.id for s in fits]
    if pinned is None:
        switch = next((s for s in fits if not s.managed), fits[0])
    else:
        switch = _pinned(pc, pinned, gen, server, node_nic, allowed)
    if node_nic.port_speed_gbps != switch.port_speed_gbps:
        raise _rate_mismatch(server, node_nic, switch)
    return FabricParts(switch, node_nic, _host_hca(pc, gen, node_nic))


def _rate_mismatch(server: Server, nic: NicModel, switch: SwitchModel) -> PodplanError:
    """A NIC of the switch's generation at another port rate (NDR200 on a 400G NDR port):
    it takes a splitter per switch cage, which podplan does not design."""
    return PodplanError(
        "the GPU nodes' fabric NIC runs at another rate than the fabric switch's ports",
        problems=[
            Problem(
                path="hardware.server",
                message=(
                    f"{server.name}: {nic.name} runs {nic.port_speed_gbps} Gb/s per port, "
                    f"{switch.name} {switch.port_speed_gbps} Gb/s; joining them takes splitter "
                    "cables (one switch port to two NICs), which podplan does not design"
                ),
                hint="choose a server whose fabric NIC matches an InfiniBand switch's rate",
            )
        ],
    )


def _pinned(
    pc: PlanCatalog, pinned: str, gen: str, server: Server, nic: NicModel, allowed: list[str]
) -> SwitchModel:
    ib = {s.id: s for s in _ib_switches(pc)}
    if pinned not in ib:
        what = "an Ethernet switch" if pinned in pc.switches else "not a catalog switch"
        raise _refuse(pinned, f"{what}; the compute fabric is InfiniBand",
                      f"choose an {gen} InfiniBand switch", allowed)
    switch = ib[pinned]
    sw_gen = switch.ib_generation or DEFAULT_GENERATION
    if sw_gen == gen:
        return switch
    nodes = f"{server.name} has {nic.name} ({gen}, {nic.port_speed_gbps} Gb/s)"
    if sw_gen == "NDR":
        why = (f"{nodes}; {switch.name} is {sw_gen}. NVIDIA joins the two only through "
               "twin-port OSFP to 2x QSFP56 HDR splitter cables (MCP7Y60-H), every switch "
               "port at HDR 200 Gb/s: half the switch's bandwidth and a different cable "
               "plan, which podplan does not design or price")
    else:
        why = (f"{nodes}; {switch.name} is {sw_gen} ({switch.port_speed_gbps} Gb/s per "
               f"port, {switch.cage_type} cages) and cannot carry {gen}")
    return_hint = f"leave fabric.switch unset for the {gen} default, or pin one of its switches"
    raise _refuse(pinned, why, return_hint, allowed)

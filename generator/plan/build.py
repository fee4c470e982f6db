"""Spec + sizing -> one resolved ``ClusterPlan``.

The order of decisions: compute nodes and spares -> management servers -> compute fabric ->
storage -> front-end Ethernet and racks (solved together: every rack adds an out-of-band
switch that needs a front-end uplink) -> addresses -> scheduler -> reliability -> cloud.
Each step lives in its own module; this one is the composition root: ``_decide`` runs the
steps into a ``parts.Parts`` record, ``_assemble`` turns that into the frozen plan.

Where the pieces live: ``layout`` (front end + racks fixed point), ``address_table``
(address assignment), ``devices`` (nodes, switches, links, rack elevations) and ``summary``
(power, fabric summary, notes). Objects in the large lists are built without per-object
validation (``_construct.builder``, a ``model_construct`` equivalent) from already-validated
inputs, with the cyclic GC paused: a 2,048-node plan takes well under a second.
"""

from __future__ import annotations

from generator.catalog.load import Catalog
from generator.catalog.models import Server
from generator.errors import PodplanError
from generator.gcpause import gc_paused
from generator.plan.catalog_models import PlanCatalog
from generator.plan.cloud import plan_cloud
from generator.plan.compute import plan_compute
from generator.plan.devices import build_links, build_nodes, build_switches, floor_of
from generator.plan.facility.layout import node_link_gbytes, north_south_nic, solve_layout
from generator.plan.facility.power import build_racks
from generator.plan.heads import plan_management
from generator.plan.lock import names as lock_names
from generator.plan.lock.fabric import kept_shape
from generator.plan.lock.heads import kept_management
from generator.plan.lock.model import Lock
from generator.plan.lock.state import identity_notes
from generator.plan.models import (
    CloudEquivalent,
    ClusterPlan,
    NetworkPlan,
    Reliability,
    SchedulerPlan,
)
from generator.plan.network import addressing
from generator.plan.network.address_table import AddressTable, assign_addresses
from generator.plan.network.fabric import build_fabric, shape_fabric
from generator.plan.network.fabric_need import fabric_absence
from generator.plan.network.fabric_parts import fabric_parts
from generator.plan.network.inband import plan_inband
from generator.plan.parts import Parts
from generator.plan.reliability import failure_stats, plan_reliability, reliability_note
from generator.plan.scheduler import plan_scheduler
from generator.plan.storage import plan_storage
from generator.plan.summary import fabric_summary, plan_notes, power_summary, site_note
from generator.sizing.result import SizingResult
from generator.spec.models import Spec

STORAGE_PREFIX = "pscale"


def build_plan(
    spec: Spec,
    spec_file: str,
    sizing: SizingResult,
    catalog: Catalog,
    lock: Lock | None = None,
    ignored_lock: str | None = None,
) -> ClusterPlan:
    """Resolve every node, switch, cable, rack slot and address for ``spec``.

    ``lock``: the plan lock to keep (``generator.plan.lock``); ``ignored_lock``: the path of
    a lock ``--fresh`` set aside, for the plan notes."""
    try:
        with gc_paused():
            parts = _decide(spec, sizing, PlanCatalog(catalog), lock)
            return _assemble(parts, spec_file, ignored_lock)
    except PodplanError as err:
        if err.source is not None:
            raise
        raise PodplanError(err.summary, spec_file, err.problems) from None


# ---------------------------------------------------------------- deciding


def _rails(spec: Spec, server: Server, absent: tuple[str, str] | None) -> int:
    """East-west NICs per node; zero when the plan buys no compute fabric (fabric_need)."""
    if absent:
        return 0
    chosen = spec.hardware.east_west_nics_per_node
    return server.default_east_west_nics if chosen is None else chosen


def _decide(spec: Spec, sizing: SizingResult, pc: PlanCatalog, lock: Lock | None) -> Parts:
    """Run every placement decision, in dependency order, before any plan object exists."""
    server = pc.servers[spec.hardware.server]
    gpu = pc.gpus[spec.hardware.gpu]
    stats = failure_stats(pc)
    nodes = plan_compute(spec, sizing, stats)
    fparts = fabric_parts(pc, server, spec.fabric.switch)
    ib = fparts.switch
    if lock:
        nodes = lock_names.compute(nodes, spec, lock, ib.ports // 2)
    absent = fabric_absence(spec, server, sizing, len(nodes.compute) + len(nodes.spares), lock)
    rails = _rails(spec, server, absent)
    mgmt = plan_management(spec, rails > 0, len(nodes.compute), pc.management, ib.ports // 2)
    if lock:
        mgmt = kept_management(mgmt, lock, pc.management, len(nodes.compute))
    sm_hosts = mgmt.subnet_manager_hosts(spec.fabric.subnet_manager.value) if rails else []
    fabric_nodes = nodes.fabric_slots
    designed = len(fabric_nodes) + spec.fabric.growth_nodes
    shape = kept_shape(shape_fabric(designed, rails, ib.ports, len(sm_hosts)), lock)
    graph = build_fabric(shape, fabric_nodes, sm_hosts)
    graph.switch_model = ib.id
    # the service address sits at a fixed offset from the base, which sizing never moves
    nfs = addressing.Pool(spec.network.frontend_cidr, "network.frontend_cidr", 0).text(
        addressing.SERVICE_OFFSET
    )
    storage = plan_storage(spec, sizing, pc, nfs, node_link_gbytes(spec, pc, server),
                           lock.storage_drive_tb if lock else 0.0,
                           len(lock.with_role("storage")) if lock else 0)
    storage_names = [f"{STORAGE_PREFIX}{i:02d}" for i in range(1, storage.nodes + 1)]
    if lock:
        storage_names = lock_names.sequential(lock, "storage", STORAGE_PREFIX, 2, storage.nodes)
    frontend, backend, oob_agg, racks = solve_layout(
        spec, pc, server, nodes, mgmt, graph, storage_names, lock
    )
    return Parts(
        spec,
        sizing,
        pc,
        server,
        gpu,
        nodes,
        mgmt,
        shape,
        graph,
        storage,
        storage_names,
        frontend,
        racks,
        backend,
        oob_agg,
        lock,
        absent,
        fparts,
    )


# ---------------------------------------------------------------- assembling the plan


def _timed_runs(p: Parts) -> list[str]:
    """The training workloads the reliability model times (as ``plan_reliability``)."""
    return [t.name for t in p.sizing.training if t.time_hours > 0 and t.gpus > 0]


def _assemble(p: Parts, spec_file: str, ignored_lock: str | None) -> ClusterPlan:
    """Build the plan objects from the decisions, then the services that read them."""
    spec = p.spec
    addr = assign_addresses(p)
    nodes = build_nodes(p, addr)
    switches = build_switches(p, addr)
    floor = floor_of(p)
    links = build_links(p, floor)
    racks = build_racks(p, floor, nodes, switches)
    network = _network(p, addr)
    lock_state = identity_notes(p, nodes, switches, links, racks, network, ignored_lock)
    power = power_summary(spec, racks, p.pc.floor.air_cooling_limit_kw)
    reliability = plan_reliability(
        p.sizing,
        failure_stats(p.pc),
        p.storage.write_gbps,
        p.storage.read_gbps,
        len(p.nodes.spares),
    )
    scheduler = _scheduler(p)
    cloud, cloud_notes = _cloud(p, reliability)
    return ClusterPlan.model_construct(
        name=spec.name,
        spec_file=spec_file,
        scheduler_kind=spec.provisioning.scheduler.value,
        sizing=p.sizing,
        nodes=nodes,
        switches=switches,
        links=links,
        fabric=fabric_summary(p),
        network=network,
        storage=p.storage,
        reliability=reliability,
        racks=racks,
        power=power,
        scheduler=scheduler,
        cloud=cloud,
        admin_cidr=spec.provisioning.admin_cidr,
        notes=plan_notes(
            p,
            [
                *addr.ranges.notes,
                *filter(None, [site_note(links, spec.ethernet.site_uplinks_per_switch)]),
                *filter(None, [reliability_note(reliability, _timed_runs(p))]),
                *cloud_notes,
                *lock_state.notes,
            ],
        ),
        east_west_nic=p.server.east_west_nic if p.shape.rails else "",
        east_west_built_in=p.server.east_west_built_in,
        north_south_nic=north_south_nic(spec, p.server),
        north_south_built_in=p.server.north_south_built_in,
        spares_policy=spec.spares.model_dump(),
        management_tier=p.mgmt.tier,
        retired=lock_state.retired,
        identity_changes=lock_state.changes,
        freed=lock_state.freed,
    )


def _scheduler(p: Parts) -> SchedulerPlan:
    """Scheduler partitions and node definitions, each fabric node tagged with its SU."""
    su = p.graph.node_su
    return plan_scheduler(
        p.spec.provisioning.scheduler.value,
        p.spec.name,
        p.mgmt.heads,
        p.mgmt.login,
        [(n, su.get(n, 1)) for n in p.nodes.compute],
        [(n, su.get(n, 1)) for n in p.nodes.spares],
        p.server,
        p.gpu,
        p.sizing.gpus_per_node,
        p.shape,
        p.spec.hardware.node_shape,
    )


def _cloud(p: Parts, reliability: Reliability) -> tuple[list[CloudEquivalent], list[str]]:
    """Cloud equivalents of the cluster for each requested provider, and their notes."""
    return plan_cloud(
        [c.value for c in p.spec.provisioning.clouds],
        p.pc.cloud_instances(),
        p.pc.cloud_filesystems(),
        p.spec.hardware.gpu,
        p.sizing.gpus_per_node,
        len(p.nodes.compute),
        len(p.mgmt.login),
        p.storage,
        reliability.wallclock_hours,
    )


def _network(p: Parts, addr: AddressTable) -> NetworkPlan:
    """The plan's ranges (the spec's, or defaults sized to the plan), the derived rail
    subnets and management gateway, and the in-band management design."""
    net = addr.ranges
    return NetworkPlan(
        inband=plan_inband(p.spec, p.frontend, net.mgmt, net.frontend, p.storage_names),
        oob_cidr=net.oob,
        mgmt_cidr=net.mgmt,
        frontend_cidr=net.frontend,
        fabric_cidr=net.fabric,
        rail_cidrs=addr.rail_cidrs,
        mgmt_gateway=addr.mgmt_gateway,
    )

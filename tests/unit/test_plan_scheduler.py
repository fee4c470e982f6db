"""Scheduler layout, topology tree, names and addresses of the plan."""

from __future__ import annotations

import ipaddress

from generator.catalog.load import default_catalog
from generator.plan.speed import plan_for


def test_slurm_layout_from_the_catalog() -> None:
    _, plan = plan_for(4, default_catalog(), hardware={"login_nodes": 2})
    s = plan.scheduler
    assert s.controllers == ["head01", "head02"] and s.dbd_host == "head01"
    assert s.login == ["login01", "login02"]
    (ns,) = s.nodesets
    assert ns.name == "gpu" and ns.hosts == ["gpu001", "gpu002", "gpu003", "gpu004"]
    assert (ns.sockets, ns.cores_per_socket, ns.threads_per_core, ns.cpus) == (2, 48, 2, 192)
    assert ns.real_memory_mb == int(1024 * 1024 * 0.95)
    assert (ns.gpu_type, ns.gpu_count, ns.gpu_files) == ("h100", 8, "/dev/nvidia[0-7]")
    assert [(p.name, p.default) for p in s.partitions] == [("gpu", True)]


def test_topology_is_scalable_units_then_spine() -> None:
    _, plan = plan_for(70, default_catalog())
    top = plan.scheduler.topology
    assert [t.switch for t in top] == ["su1", "su2", "su3", "spine"]
    assert top[0].nodes and len(top[0].nodes) == 32 and len(top[2].nodes or []) == 6
    assert top[-1].switches == ["su1", "su2", "su3"]
    su_of = {n.name: n.su for n in plan.nodes_with_role("compute")}
    for t in top[:3]:
        assert {su_of[n] for n in t.nodes or []} == {int(t.switch[2:])}


def test_three_tier_topology_groups_sus_into_pods() -> None:
    _, plan = plan_for(300, default_catalog())
    names = [t.switch for t in plan.scheduler.topology]
    assert names[:10] == [f"su{i}" for i in range(1, 11)]
    assert names[10:] == ["pod1", "pod2", "pod3", "core"]
    assert plan.scheduler.topology[10].switches == ["su1", "su2", "su3", "su4"]


def test_spares_get_their_own_nodeset_and_partition() -> None:
    _, plan = plan_for(4, default_catalog(), hardware={"hot_spares": 2})
    assert [ns.name for ns in plan.scheduler.nodesets] == ["gpu", "spare"]
    assert plan.scheduler.nodesets[1].hosts == ["gpu005", "gpu006"]
    assert [(p.name, p.default) for p in plan.scheduler.partitions] == [
        ("gpu", True),
        ("spare", False),
    ]


def test_addresses_are_deterministic_and_ordered() -> None:
    _, a = plan_for(8, default_catalog())
    _, b = plan_for(8, default_catalog())
    assert a.model_dump() == b.model_dump()
    mgmt = [ipaddress.ip_interface(n.addresses.mgmt) for n in a.nodes if n.addresses.mgmt]
    assert [str(x.ip) for x in mgmt[:3]] == ["10.129.0.10", "10.129.0.11", "10.129.0.12"]
    assert mgmt == sorted(mgmt)
    gpu1 = a.nodes_with_role("compute")[0]
    hosts = {ipaddress.ip_interface(f.address).ip.packed[-1] for f in gpu1.addresses.fabric}
    assert len(hosts) == 1  # same host number on every rail
    assert a.storage.nfs_server == "10.130.0.3"


def test_every_switch_has_an_oob_address_and_a_rack() -> None:
    _, plan = plan_for(40, default_catalog())
    assert all(s.mgmt_address and s.rack for s in plan.switches)
    oob = [s for s in plan.switches if s.network == "oob" and s.tier == "leaf"]
    assert len(oob) == len(plan.racks)
    assert all(s.u == plan.racks[0].units for s in oob)

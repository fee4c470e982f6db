"""Scheduler layout, topology tree, names and addresses of the plan."""

from __future__ import annotations

import ipaddress

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog


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


def test_the_spec_states_the_node_shape_field_by_field() -> None:
    """2x Xeon 8480+ (56 cores) and 2 TB instead of the catalog's 48 cores and 1 TB."""
    shape = {"cores_per_socket": 56, "memory_gb": 2048}
    _, plan = plan_for(2, default_catalog(), hardware={"node_shape": shape})
    (ns,) = plan.scheduler.nodesets
    assert (ns.sockets, ns.cores_per_socket, ns.threads_per_core, ns.cpus) == (2, 56, 2, 224)
    assert ns.real_memory_mb == int(2048 * 1024 * 0.95) and ns.memory_gb == 2048


def test_os_reservations_and_per_gpu_defaults_follow_the_shape() -> None:
    _, plan = plan_for(2, default_catalog())
    (ns,) = plan.scheduler.nodesets
    (part,) = plan.scheduler.partitions
    # A core per socket and 2 % of RealMemory (within 2-32 GiB) for the OS and daemons.
    assert (ns.core_spec_count, ns.mem_spec_limit_mb) == (2, int(ns.real_memory_mb * 0.02))
    # Whole cores per GPU, so eight 1-GPU jobs fit: (96 - 2) // 8 = 11 cores = 22 CPUs.
    assert part.def_cpu_per_gpu == 22
    assert part.def_mem_per_gpu_mb * 8 <= ns.real_memory_mb - ns.mem_spec_limit_mb
    assert (part.default_time, part.max_time) == ("01:00:00", "7-00:00:00")


def test_a_small_node_keeps_a_core_for_jobs_and_drops_def_cpu_per_gpu() -> None:
    shape = {"sockets": 1, "cores_per_socket": 2, "threads_per_core": 1, "memory_gb": 23}
    _, plan = plan_for(1, default_catalog(), hardware={"node_shape": shape})
    (ns,) = plan.scheduler.nodesets
    (part,) = plan.scheduler.partitions
    assert (ns.core_spec_count, ns.mem_spec_limit_mb) == (1, 2048)
    assert part.def_cpu_per_gpu is None  # one free core cannot be split over 8 GPUs

"""A small, fully validated ClusterPlan for the BCM tests (the plan builder lands separately).

Two head nodes (the HA pair), one login node, one UFM appliance, four XE9680 GPU nodes in two
scalable units plus one spare, a 4-rail rail-optimized NDR fabric (eight leaves, two spines),
a front-end and an OOB switch. Port labels mix plain numbers and ``N/M`` breakouts so both
forms reach the emitter.
"""

from __future__ import annotations

from generator.plan.models import (
    Addresses,
    ClusterPlan,
    FabricAddress,
    FabricSummary,
    Link,
    NetworkPlan,
    Node,
    NodeSet,
    Partition,
    PowerSummary,
    Rack,
    Reliability,
    SchedulerPlan,
    StoragePlan,
    Switch,
    SwitchNetwork,
    TopologySwitch,
)
from generator.sizing.result import SizingResult

NAME = "bcm-fixture"
SPEC_FILE = "tests/bcm/fixture-spec.yaml"
RAILS = 4
GPU_NODES = {"gpu001": 1, "gpu002": 1, "gpu003": 2, "gpu004": 2}  # node -> scalable unit
SPARE = "gpu005"


def _addresses(i: int, fabric: bool) -> Addresses:
    rails = [
        FabricAddress(rail=r, device=f"mlx5_{r}", address=f"10.200.{4 * r}.{i}/22")
        for r in range(RAILS)
    ] if fabric else []
    return Addresses(
        mgmt=f"10.129.0.{i}/20", bmc=f"10.128.0.{i}/20", frontend=f"10.130.0.{i}/20",
        fabric=rails,
    )


def _nodes() -> list[Node]:
    nodes = [
        Node(name="head01", role="head", model="r660", rack="r01", u=40, height_u=1,
             power_kw=1.1, addresses=_addresses(1, False)),
        Node(name="head02", role="head", model="r660", rack="r01", u=39, height_u=1,
             power_kw=1.1, addresses=_addresses(2, False)),
        Node(name="login01", role="login", model="r660", rack="r01", u=38, height_u=1,
             power_kw=1.1, addresses=_addresses(3, False)),
        Node(name="ufm01", role="ufm", model="ufm-3.5", rack="r01", u=37, height_u=1,
             power_kw=0.6, addresses=Addresses(mgmt="10.129.0.4/20", bmc="10.128.0.4/20")),
    ]
    for idx, (name, su) in enumerate(GPU_NODES.items()):
        nodes.append(Node(
            name=name, role="compute", model="xe9680", rack=f"r0{su}", u=1 + 6 * (idx % 2),
            height_u=6, power_kw=11.5, gpus=8, gpu="h100-sxm-80gb", su=su,
            addresses=_addresses(11 + idx, True)))
    nodes.append(Node(
        name=SPARE, role="spare", model="xe9680", rack="r02", u=13, height_u=6, power_kw=11.5,
        gpus=8, gpu="h100-sxm-80gb", addresses=_addresses(15, True)))
    return nodes


def _switches() -> list[Switch]:
    out = []
    for su in (1, 2):
        for r in range(RAILS):
            out.append(Switch(
                name=f"leaf-su{su}-r{r}", network="compute", tier="leaf", model="qm9790",
                ports=64, rail=r, su=su, rack=f"r0{su}", u=20 + r, height_u=1, power_kw=1.3,
                mgmt_address=f"10.128.1.{10 * su + r}/20"))
    for k in (1, 2):
        out.append(Switch(
            name=f"spine0{k}", network="compute", tier="spine", model="qm9790", ports=64,
            rack="r01", u=30 + k, height_u=1, power_kw=1.3, mgmt_address=f"10.128.1.{40 + k}/20"))
    out.append(Switch(name="fe01", network="frontend", tier="leaf", model="sn4600c", ports=64,
                      rack="r01", u=34, height_u=1, power_kw=0.5,
                      mgmt_address="10.128.1.50/20"))
    out.append(Switch(name="oob01", network="oob", tier="leaf", model="s3248t", ports=48,
                      rack="r01", u=35, height_u=1, power_kw=0.2))
    return out


def _link(network: SwitchNetwork, a: str, a_port: str, b: str, b_port: str) -> Link:
    return Link(network=network, a=a, a_port=a_port, b=b, b_port=b_port, speed_gbps=400,
                cable="mmf-osfp-30m")


def _links() -> list[Link]:
    links = []
    per_su: dict[int, int] = {}
    for name, su in [*GPU_NODES.items(), (SPARE, 2)]:
        per_su[su] = per_su.get(su, 0) + 1
        for r in range(RAILS):
            links.append(_link("compute", name, f"mlx5_{r}", f"leaf-su{su}-r{r}",
                               str(per_su[su])))
        links.append(_link("frontend", name, "eth0", "fe01", f"swp{len(links)}"))
    for su in (1, 2):
        for r in range(RAILS):
            for k in (1, 2):
                # spine ports are breakout labels: leaf's uplink lands on spine port N/2|N/1
                links.append(_link("compute", f"leaf-su{su}-r{r}", str(32 + k), f"spine0{k}",
                                   f"{4 * (su - 1) + r + 1}/{su}"))
    return links


def fixture_plan() -> ClusterPlan:
    """The fixture plan (validated: every model is constructed, not model_construct'ed,
    except the sizing result, which the BCM emitter never reads)."""
    nodeset = NodeSet(
        name="gpu", hosts=list(GPU_NODES), cpus=224, sockets=2, cores_per_socket=56,
        threads_per_core=2, real_memory_mb=1945600, gpu_type="h100", gpu_count=8,
        gpu_files="/dev/nvidia[0-7]", features=["xe9680", "h100"])
    scheduler = SchedulerPlan(
        kind="bcm", cluster_name=NAME, controllers=["head01", "head02"], dbd_host="head01",
        login=["login01"], nodesets=[nodeset],
        partitions=[Partition(name="gpu", nodesets=["gpu"], default=True),
                    Partition(name="debug", nodesets=["gpu"], max_time="00:30:00")],
        topology=[TopologySwitch(switch="su1", nodes=["gpu001", "gpu002"]),
                  TopologySwitch(switch="su2", nodes=["gpu003", "gpu004"]),
                  TopologySwitch(switch="fabric", switches=["su1", "su2"])],
    )
    sizing = SizingResult.model_construct(
        name=NAME, server="xe9680", gpu="h100-sxm-80gb", gpus_per_node=8, nodes=4, gpus=32,
        training=[], inference=[], fits=True, order=[], notes=[])
    return ClusterPlan(
        name=NAME, spec_file=SPEC_FILE, scheduler_kind="bcm", sizing=sizing,
        nodes=_nodes(), switches=_switches(), links=_links(),
        fabric=FabricSummary(
            switch_model="qm9790", tiers=2, rails=RAILS, su_nodes=2, scalable_units=2,
            designed_nodes=5, leaf_switches=8, spine_switches=2, core_switches=0,
            node_to_leaf_links=20, leaf_to_spine_links=16, spine_to_core_links=0,
            subnet_manager="ufm"),
        network=NetworkPlan(
            oob_cidr="10.128.0.0/20", mgmt_cidr="10.129.0.0/20", frontend_cidr="10.130.0.0/20",
            fabric_cidr="10.200.0.0/16",
            rail_cidrs=[f"10.200.{4 * r}.0/22" for r in range(RAILS)],
            mgmt_gateway="10.129.15.254"),
        storage=StoragePlan(
            model="f710", nodes=4, drive_tb=15.36, raw_tb=614.4, usable_tb=450.0,
            required_tb=120.0, read_gbps=40.0, write_gbps=20.0, checkpoint_gb=1100.0,
            checkpoint_write_s=55.0, nfs_server="10.130.8.10", nfs_export="/ifs/bcm-fixture"),
        reliability=Reliability(
            failures_per_gpu_hour=1e-5, expected_interruptions=1.0, checkpoint_write_s=55.0,
            checkpoint_interval_hours=1.0, restart_hours=0.25, goodput=0.95,
            compute_hours=100.0, wallclock_hours=105.0, spares=1),
        racks=[Rack(name="r01", units=42, power_budget_kw=40.0, power_kw=31.2, slots=[]),
               Rack(name="r02", units=42, power_budget_kw=40.0, power_kw=34.5, slots=[])],
        power=PowerSummary(it_kw=65.7, btu_per_hour=224178.0, facility_kw=85.4),
        scheduler=scheduler,
        cloud=[],
        admin_cidr="203.0.113.0/24",
    )

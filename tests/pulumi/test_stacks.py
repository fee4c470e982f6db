"""Every example spec x every cloud it asks for: run the real stack program under recording
mocks with the generated ``Pulumi.<name>.yaml`` and assert the cluster's shape.

Shape = what makes the cloud cluster equivalent to the plan: node count and type, the GPU
fabric (32 EFA per p5, 8 GPU NIC networks per A3 Mega, one InfiniBand placement group on
Azure), placement, file-system size and throughput, least-privilege security, encryption at
rest, tags, and a Slurm bootstrap that carries no secret.
"""

from __future__ import annotations

import base64
import ipaddress
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from generator.plan.models import ClusterPlan
from tests.pulumi.conftest import EXAMPLE_CLOUD_PARAMS, EXAMPLE_CLOUDS, equivalent, stack_config
from tests.pulumi.harness import SECRET_TEST_VALUES, StackRun, import_from_stacks, unsecret

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # provider SDK imports

violations = import_from_stacks("policy", "podplan_policy.rules").violations
StackRunner = Callable[[str, str], StackRun]
PlanOf = Callable[[str], ClusterPlan]

WORLD = {"0.0.0.0/0", "::/0", "*", "Internet"}
SECRET = SECRET_TEST_VALUES["sshPublicKey"]


def _cloud_config(user_data: str) -> dict[str, Any]:
    assert user_data.startswith("#cloud-config\n")
    doc = yaml.safe_load(user_data)
    assert isinstance(doc, dict)
    return doc


def _file(doc: dict[str, Any], path: str) -> str:
    for f in doc["write_files"]:
        if f["path"] == path:
            return str(f["content"])
    raise AssertionError(f"{path} not in user data")


def check_bootstrap(head_ud: str, compute_ud: str, plan: ClusterPlan, head_ip: str) -> None:
    """Head runs slurmctld for the cluster; compute nodes point slurmd at the head's address;
    neither carries key material."""
    head, compute = _cloud_config(head_ud), _cloud_config(compute_ud)
    conf = _file(head, "/etc/slurm/slurm.conf")
    assert f"ClusterName={plan.name}\n" in conf
    assert f"({head_ip})" in conf and "enable_configless" in conf
    assert "slurmctld" in head["packages"] and "slurmd" in compute["packages"]
    slurmd = _file(compute, "/etc/default/slurmd")
    assert f"--conf-server {head_ip}:6817" in slurmd and "-Z" in slurmd
    for text in (head_ud, compute_ud):
        assert SECRET not in text and "PRIVATE KEY" not in text


def check_tags(tags: Any, plan: ClusterPlan) -> None:
    assert tags["podplan-cluster"] == plan.name
    assert tags["podplan-spec"]  # the spec path (GCP labels carry it sanitised)


# -- AWS ------------------------------------------------------------------------------------------


def check_aws(run: StackRun, plan: ClusterPlan, config: dict[str, Any]) -> None:
    ce = equivalent(plan, "aws")
    templates = run.of("aws:ec2/launchTemplate:LaunchTemplate")
    gpu_lt = next(t for t in templates if t.inputs.get("instanceType") == ce.instance_type)
    head_lt = next(t for t in templates if t is not gpu_lt)
    instances = run.of("aws:ec2/instance:Instance")
    gpu_nodes = [i for i in instances if i.inputs["launchTemplate"]["id"] == f"{gpu_lt.name}-id"]
    assert len(gpu_nodes) == ce.count and len(instances) == ce.count + 1
    width = max(3, len(str(ce.count)))
    # The SDK registers resources concurrently: compare names, not registration order.
    assert sorted(i.inputs["tags"]["Name"] for i in gpu_nodes) == [
        f"{plan.name}-gpu-{n:0{width}d}" for n in range(1, ce.count + 1)
    ]

    # Fabric: one EFA per network card, all 32 of them on p5; card 0 keeps its ENA.
    nics = gpu_lt.inputs["networkInterfaces"]
    efa = [n for n in nics if n["interfaceType"] in ("efa", "efa-only")]
    assert len(efa) == ce.fabric_interfaces == config["podplan-aws:efaInterfaces"]
    if ce.instance_type == "p5.48xlarge":
        assert len(efa) == 32
    assert sorted(int(n["networkCardIndex"]) for n in efa) == list(range(len(efa)))
    primary = [n for n in nics if n["networkCardIndex"] == 0 and n["deviceIndex"] == 0]
    assert [n["interfaceType"] for n in primary] == ["efa"]

    # Placement: the template launches into the cluster placement group.
    pg = run.one("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    assert gpu_lt.inputs["placement"]["groupName"] == pg.name

    # Shared file system.
    fsx = run.one("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["deploymentType"] == "PERSISTENT_2"
    assert fsx.inputs["storageCapacity"] == config["podplan-aws:fsxStorageCapacityGib"]
    assert fsx.inputs["storageCapacity"] >= ce.filesystem.capacity_tib * 1024 - 2
    assert fsx.inputs["perUnitStorageThroughput"] == ce.filesystem.throughput_mb_s_per_tib

    # Security: nothing from the internet; SSH from the admin network only, to the head only.
    ingress = run.of("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    assert not [r for r in ingress if r.inputs.get("cidrIpv4") in WORLD]
    cidr_rules = [r for r in ingress if "cidrIpv4" in r.inputs]
    assert [
        (r.inputs["cidrIpv4"], r.inputs["fromPort"], r.inputs["toPort"]) for r in cidr_rules
    ] == [(plan.admin_cidr, 22, 22)]
    self_rules = [r for r in ingress if "referencedSecurityGroupId" in r.inputs]
    assert all(
        r.inputs["referencedSecurityGroupId"] == r.inputs["securityGroupId"] for r in self_rules
    )
    default_sg = run.one("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert not default_sg.inputs.get("ingress")

    # Encryption at rest and tags.
    for lt in templates:
        assert all(m["ebs"]["encrypted"] == "true" for m in lt.inputs["blockDeviceMappings"])
        assert lt.inputs["metadataOptions"]["httpTokens"] == "required"
    for r in [*instances, fsx]:
        check_tags(r.inputs["tags"], plan)

    head = next(i for i in instances if i not in gpu_nodes)
    head_ip = head.inputs["privateIp"]
    assert ipaddress.ip_address(head_ip) in ipaddress.ip_network(
        config["podplan-aws:publicSubnetCidr"]
    )
    compute_ud = base64.b64decode(unsecret(gpu_lt.inputs)["userData"]).decode()
    check_bootstrap(unsecret(head.inputs)["userData"], compute_ud, plan, head_ip)
    assert "tags/instance/Name" in compute_ud  # each node names itself after its Name tag
    assert head_lt.inputs["instanceType"] == ce.head_instance_type


# -- GCP ------------------------------------------------------------------------------------------


def check_gcp(run: StackRun, plan: ClusterPlan, config: dict[str, Any]) -> None:
    ce = equivalent(plan, "gcp")
    vms = run.of("gcp:compute/instance:Instance")
    gpu_vms = [v for v in vms if v.inputs["machineType"] == ce.instance_type]
    assert len(gpu_vms) == ce.count and len(vms) == ce.count + 1

    # Fabric: 1 system NIC + one NIC in each of the 8 GPU VPCs (MTU 8244).
    gpu_subnets = config["podplan-gcp:gpuSubnetCidrs"]
    assert len(gpu_subnets) == ce.fabric_interfaces
    if ce.instance_type == "a3-megagpu-8g":
        assert ce.fabric_interfaces == 8
    networks = run.of("gcp:compute/network:Network")
    assert len(networks) == 1 + ce.fabric_interfaces
    assert all(n.inputs["mtu"] == 8244 for n in networks)
    subnet_ids = {f"{s.name}-id" for s in run.of("gcp:compute/subnetwork:Subnetwork")}
    for vm in gpu_vms:
        nics = vm.inputs["networkInterfaces"]
        assert len(nics) == 1 + ce.fabric_interfaces
        assert (
            len({n["subnetwork"] for n in nics}) == len(nics)
            and {n["subnetwork"] for n in nics} <= subnet_ids
        )
        assert all(n["nicType"] == "GVNIC" for n in nics)
        assert vm.inputs["scheduling"]["onHostMaintenance"] == "TERMINATE"

    # Placement: every GPU VM under the one compact placement policy.
    policy = run.one("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"]["collocation"] == "COLLOCATED"
    assert policy.inputs["groupPlacementPolicy"]["vmCount"] == ce.count
    assert {vm.inputs["resourcePolicies"] for vm in gpu_vms} == {
        f"projects/test/compute/resourcePolicy/{policy.name}"
    }

    # Shared file system.
    lustre = run.one("gcp:lustre/instance:Instance")
    assert int(lustre.inputs["capacityGib"]) == config["podplan-gcp:lustreCapacityGib"]
    assert int(lustre.inputs["capacityGib"]) >= ce.filesystem.capacity_tib * 1024 - 2
    assert int(lustre.inputs["perUnitStorageThroughput"]) == ce.filesystem.throughput_mb_s_per_tib
    assert lustre.inputs["location"] == config["gcp:zone"]

    # Security: SSH only from the admin CIDR to the head tag; nothing from the internet.
    firewalls = run.of("gcp:compute/firewall:Firewall")
    for fw in firewalls:
        assert not set(fw.inputs.get("sourceRanges", [])) & WORLD
        assert fw.inputs.get("sourceRanges") or fw.inputs.get("sourceTags")
    ssh = [fw for fw in firewalls if any("22" in a.get("ports", []) for a in fw.inputs["allows"])]
    assert [(fw.inputs["sourceRanges"], fw.inputs["targetTags"]) for fw in ssh] == [
        ([plan.admin_cidr], [f"{plan.name}-head"])
    ]
    head = next(v for v in vms if v not in gpu_vms)
    assert [v for v in vms if v.inputs["networkInterfaces"][0].get("accessConfigs")] == [head]

    for r in [*vms, lustre]:
        check_tags(r.inputs["labels"], plan)
    head_ip = head.inputs["networkInterfaces"][0]["networkIp"]
    check_bootstrap(
        unsecret(head.inputs)["metadata"]["user-data"],
        unsecret(gpu_vms[0].inputs)["metadata"]["user-data"],
        plan,
        head_ip,
    )
    assert unsecret(head.inputs)["metadata"]["ssh-keys"].endswith(SECRET)


# -- Azure ----------------------------------------------------------------------------------------


def check_azure(run: StackRun, plan: ClusterPlan, config: dict[str, Any]) -> None:
    ce = equivalent(plan, "azure")
    vmss = run.one("azure-native:compute:VirtualMachineScaleSet")  # ONE scale set
    assert vmss.inputs["singlePlacementGroup"] is True
    assert vmss.inputs["sku"]["name"] == ce.instance_type
    assert vmss.inputs["sku"]["capacity"] == ce.count
    assert vmss.inputs["overprovision"] is False
    assert vmss.inputs["platformFaultDomainCount"] == 1
    profile = unsecret(vmss.inputs["virtualMachineProfile"])
    assert profile["securityProfile"]["encryptionAtHost"] is True
    assert profile["osProfile"]["linuxConfiguration"]["disablePasswordAuthentication"] is True

    amlfs = run.one("azure-native:storagecache:AmlFilesystem")
    assert amlfs.inputs["storageCapacityTiB"] == config["podplan-azure:amlfsCapacityTib"]
    assert amlfs.inputs["storageCapacityTiB"] >= ce.filesystem.capacity_tib - 1e-6
    assert amlfs.inputs["sku"]["name"].endswith(f"-{ce.filesystem.throughput_mb_s_per_tib}")

    rules = run.one("azure-native:network:NetworkSecurityGroup").inputs["securityRules"]
    allowed = [r for r in rules if r["access"] == "Allow"]
    assert not [r for r in allowed if r.get("sourceAddressPrefix") in WORLD]
    ssh = [r for r in allowed if "22" in r.get("destinationPortRanges", [])]
    assert [r["sourceAddressPrefix"] for r in ssh] == [plan.admin_cidr]
    assert max(rules, key=lambda r: r["priority"])["access"] == "Deny"

    vm = run.one("azure-native:compute:VirtualMachine")
    assert vm.inputs["hardwareProfile"]["vmSize"] == ce.head_instance_type
    assert vm.inputs["securityProfile"]["encryptionAtHost"] is True
    for r in (vmss, vm, amlfs):
        check_tags(r.inputs["tags"], plan)

    nic = run.one("azure-native:network:NetworkInterface")
    head_ip = nic.inputs["ipConfigurations"][0]["privateIPAddress"]
    head_ud = base64.b64decode(unsecret(vm.inputs)["osProfile"]["customData"]).decode()
    compute_ud = base64.b64decode(profile["osProfile"]["customData"]).decode()
    check_bootstrap(head_ud, compute_ud, plan, head_ip)


CHECKS = {"aws": check_aws, "gcp": check_gcp, "azure": check_azure}


@pytest.mark.parametrize(("spec", "cloud"), EXAMPLE_CLOUD_PARAMS)
def test_stack_shape(spec: str, cloud: str, plan_of: PlanOf, stack_run: StackRunner) -> None:
    plan = plan_of(spec)
    run = stack_run(spec, cloud)
    CHECKS[cloud](run, plan, stack_config(plan, cloud))


@pytest.mark.parametrize(("spec", "cloud"), EXAMPLE_CLOUD_PARAMS)
def test_stack_passes_the_policy_pack(spec: str, cloud: str, stack_run: StackRunner) -> None:
    run = stack_run(spec, cloud)
    found = [
        (r.typ, r.name, v) for r in run.custom() for v in violations(r.typ, unsecret(r.inputs))
    ]
    assert found == []


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_components_parent_their_children(cloud: str, stack_run: StackRunner) -> None:
    """Every cloud resource belongs to one of the stack's ComponentResources."""
    spec = next(s for s, c in EXAMPLE_CLOUDS if c == cloud)
    run = stack_run(spec, cloud)
    components = [r for r in run.resources if not r.custom]
    assert components and all(r.typ.startswith(f"podplan:{cloud}:") for r in components)
    parents = {f"{r.typ}::{r.name}" for r in components}
    orphans = [r.name for r in run.custom() if r.parent.split("$")[-1] not in parents]
    assert orphans == []


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_outputs_name_the_head_and_the_nodes(
    cloud: str, plan_of: PlanOf, stack_run: StackRunner
) -> None:
    spec = next(s for s, c in EXAMPLE_CLOUDS if c == cloud)
    ce = equivalent(plan_of(spec), cloud)
    out = stack_run(spec, cloud).outputs
    assert len(out["computeNodeNames"]) == ce.count
    assert out["headPublicIp"] and ipaddress.ip_address(out["headPrivateIp"])
    assert out["sshCommand"].endswith(f"@{out['headPublicIp']}")
    assert "@tcp:/" in out["sharedFilesystem"]

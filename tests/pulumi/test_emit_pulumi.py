"""``emit_pulumi``: one ``stacks/<cloud>/Pulumi.<name>.yaml`` per cloud equivalent, values
decided from the plan, sizes on the services' steps, no secrets."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from generator.emit import pulumi as emit
from generator.emit.pulumi import emit_pulumi
from generator.plan.models import ClusterPlan
from generator.render.files import header_lines
from tests.conftest import EXAMPLES, REPO
from tests.pulumi.harness import import_from_stacks

PlanOf = Callable[[str], ClusterPlan]
SPECS = [str(p.relative_to(REPO)) for p in EXAMPLES]


def parsed(plan: ClusterPlan) -> dict[str, dict[str, Any]]:
    return {f.path: yaml.safe_load(f.content)["config"] for f in emit_pulumi(plan)}


@pytest.mark.parametrize("spec", SPECS)
def test_one_stack_file_per_cloud_with_header(spec: str, plan_of: PlanOf) -> None:
    plan = plan_of(spec)
    files = emit_pulumi(plan)
    assert [f.path for f in files] == [
        f"stacks/{p}/Pulumi.{plan.name}.yaml"
        for p in ("aws", "gcp", "azure")
        if p in {c.provider for c in plan.cloud}
    ]
    in_order = sorted(plan.cloud, key=lambda c: emit.PROVIDERS.index(c.provider))
    for f, ce in zip(files, in_order, strict=True):
        lines = f.content.splitlines()
        assert lines[:2] == [f"# {h}" for h in header_lines(plan.spec_file)]
        head = f.content.split("\n---\n")[0]
        assert all(line.startswith("#") for line in head.splitlines())
        assert f"${ce.usd_per_hour:,.2f}/hour" in head
        assert "pulumi config set --secret sshPublicKey" in head
        assert ("pulumi config set gcp:project" in head) is (ce.provider == "gcp")
        assert emit_pulumi(plan) == files  # deterministic


@pytest.mark.parametrize("spec", SPECS)
def test_values_come_from_the_plan(spec: str, plan_of: PlanOf) -> None:
    plan = plan_of(spec)
    configs = parsed(plan)
    for ce in plan.cloud:
        config = configs[f"stacks/{ce.provider}/Pulumi.{plan.name}.yaml"]
        assert list(config) == sorted(config)
        p = f"podplan-{ce.provider}:"
        assert config[p + "clusterName"] == plan.name
        assert config[p + "specFile"] == plan.spec_file
        assert config[p + "instanceType"] == ce.instance_type
        assert config[p + "nodeCount"] == ce.count
        assert config[p + "gpusPerNode"] == ce.gpus_per_instance
        assert config[p + "headInstanceType"] == ce.head_instance_type
        assert config[p + "adminCidr"] == plan.admin_cidr
        region = {"aws": "aws:region", "gcp": "gcp:region", "azure": "azure-native:location"}
        assert config[region[ce.provider]] == ce.region
        assert not any("sshPublicKey" in k or "secure" in str(v) for k, v in config.items())


@pytest.mark.parametrize("spec", SPECS)
def test_file_system_sizes_pass_the_stacks_own_checks(spec: str, plan_of: PlanOf) -> None:
    plan = plan_of(spec)
    configs = parsed(plan)
    for ce in plan.cloud:
        config = configs[f"stacks/{ce.provider}/Pulumi.{plan.name}.yaml"]
        tier = ce.filesystem.throughput_mb_s_per_tib
        if ce.provider == "aws":
            checks = import_from_stacks("aws", "podplan_aws.config")
            gib = config["podplan-aws:fsxStorageCapacityGib"]
            assert checks.fsx_capacity_problem(gib) is None
            assert config["podplan-aws:fsxThroughputPerTib"] in checks.FSX_THROUGHPUTS
        elif ce.provider == "gcp":
            checks = import_from_stacks("gcp", "podplan_gcp.config")
            gib = config["podplan-gcp:lustreCapacityGib"]
            assert checks.lustre_capacity_problem(gib, tier) is None
        else:
            checks = import_from_stacks("azure", "podplan_azure.config")
            sku = config["podplan-azure:amlfsSku"]
            tib = config["podplan-azure:amlfsCapacityTib"]
            assert checks.amlfs_capacity_problem(tib, sku) is None
            gib = tib * 1024
        assert gib >= ce.filesystem.capacity_tib * 1024 - emit.ROUNDING_TOLERANCE_GIB


@pytest.mark.parametrize("spec", SPECS)
def test_cloud_address_blocks_avoid_the_site_and_each_other(spec: str, plan_of: PlanOf) -> None:
    plan = plan_of(spec)
    n = plan.network
    site = [
        ipaddress.ip_network(c)
        for c in (n.oob_cidr, n.mgmt_cidr, n.frontend_cidr, n.fabric_cidr, *n.rail_cidrs)
    ]
    blocks = emit._address_blocks(plan, plan.cloud)
    nets = [b[0] for b in blocks.values()]
    for i, block in enumerate(nets):
        assert not any(block.overlaps(s) for s in site)
        assert not any(block.overlaps(o) for o in nets[i + 1 :])
    for block, *subnets in blocks.values():
        assert all(s.subnet_of(block) for s in subnets)
        assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1 :])


def test_big_clusters_get_big_enough_subnets(plan_of: PlanOf) -> None:
    plan = plan_of("examples/dell-8node-config1.yaml")
    big = [c.model_copy(update={"count": 2048}) for c in plan.cloud]
    blocks = emit._address_blocks(plan, big)
    _, _, aws_private = blocks["aws"]
    assert aws_private.num_addresses >= 2048 + 16
    _, system, *gpu, _peering = blocks["gcp"]
    assert all(s.num_addresses >= 2048 + 16 for s in (system, *gpu))


@pytest.mark.parametrize(
    ("gib", "expected"),
    [
        (1000, 1200),
        (1200.3, 1200),
        (1199.9, 1200),
        (1201.7, 1200),
        (1300, 2400),
        (2400.4, 2400),
        (2500, 4800),
        (31197.6, 31200),
    ],
)
def test_fsx_sizes_snap_up_to_valid_steps(gib: float, expected: int) -> None:
    assert emit._fsx_gib(gib) == expected


@pytest.mark.parametrize(
    ("gib", "tier", "expected"),
    [
        (100, 1000, 9000),
        (8999.4, 1000, 9000),
        (9000.5, 1000, 9000),
        (9100, 1000, 18000),
        (26999.8, 1000, 27000),
        (20_000, 500, 36_000),
        (1_540_000, 1000, 1_584_000),
        (100, 125, 72_000),
    ],
)
def test_gcp_lustre_sizes_snap_up_to_valid_steps(gib: float, tier: int, expected: int) -> None:
    assert emit._gcp_lustre_gib(gib, tier) == expected


def test_odd_plan_values_are_rounded_and_noted(plan_of: PlanOf) -> None:
    plan = plan_of("examples/dell-8node-config1.yaml")
    cloud = []
    for ce in plan.cloud:
        fs = ce.filesystem.model_copy(update={"capacity_tib": 10.0})
        zone = "eastus-2" if ce.provider == "azure" else None
        cloud.append(ce.model_copy(update={"filesystem": fs, "zone": zone}))
    odd = plan.model_copy(update={"cloud": cloud})
    files = {f.path.split("/")[1]: f.content for f in emit_pulumi(odd)}
    aws, gcp, azure = (yaml.safe_load(files[c])["config"] for c in ("aws", "gcp", "azure"))
    assert aws["podplan-aws:fsxStorageCapacityGib"] == 12000
    assert aws["podplan-aws:availabilityZone"] == "us-east-1a"
    assert gcp["gcp:zone"] == "us-central1-a"
    assert azure["podplan-azure:zone"] == "2"
    assert "rounded up from 10240 to 12000 GiB" in files["aws"]
    assert "Note: Azure Managed Lustre rounded up from 10 to 12 TiB" in files["azure"]


def test_readme_quotes_the_plans_hourly_cost(plan_of: PlanOf) -> None:
    """stacks/README.md's worked example is the plan's figure, not a stale number."""
    readme = (REPO / "stacks/README.md").read_text()
    plan = plan_of("examples/dell-8node-config1.yaml")
    for ce in plan.cloud:
        row = f"| {ce.count} × {ce.instance_type} | ${ce.usd_per_hour:,.2f} |"
        assert row in readme, row

"""Stack configuration: invalid values fail with clear messages, and the keys each program
reads are exactly the keys its ``Pulumi.yaml`` declares (and the generated files provide)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from generator.plan.models import ClusterPlan
from tests.pulumi.conftest import EXAMPLE_CLOUDS, stack_config, stack_file
from tests.pulumi.harness import read_config, run_program

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # provider SDK imports

PlanOf = Callable[[str], ClusterPlan]
SPEC = "examples/dell-8node-config1.yaml"  # asks for all three clouds
KINDS = {"string": "string", "integer": "integer", "boolean": "boolean", "array": "array"}


@pytest.fixture
def base(plan_of: PlanOf) -> Callable[[str], dict[str, Any]]:
    """A fresh copy of the example's generated config for a cloud."""
    return lambda cloud: dict(stack_config(plan_of(SPEC), cloud))


def config_error(cloud: str, config: dict[str, Any], secrets: dict[str, str] | None = None) -> str:
    """Run the real program; it must stop with a ConfigError. Returns the message."""
    with pytest.raises(Exception) as caught:
        read_config(cloud, config, secrets)
    assert type(caught.value).__name__ == "ConfigError", caught.value
    return str(caught.value)


def test_fsx_capacity_off_the_step_fails_with_the_valid_sizes(base: Callable[..., Any]) -> None:
    config = base("aws") | {"podplan-aws:fsxStorageCapacityGib": 3000}
    message = config_error("aws", config)
    assert "podplan-aws:fsxStorageCapacityGib" in message
    assert "1200 GiB, or a multiple of 2400 GiB" in message
    assert "got 3000; nearest valid: 2400 or 4800" in message


def test_the_program_itself_refuses_the_bad_step(base: Callable[..., Any]) -> None:
    config = base("aws") | {"podplan-aws:fsxStorageCapacityGib": 1000}
    with pytest.raises(Exception, match=r"fsxStorageCapacityGib .*nearest valid: 1200"):
        run_program("aws", config)


def test_every_problem_is_reported_at_once(base: Callable[..., Any]) -> None:
    config = base("aws") | {
        "podplan-aws:adminCidr": "0.0.0.0/0",
        "podplan-aws:fsxThroughputPerTib": 300,
        "podplan-aws:nodeCount": 0,
        "podplan-aws:availabilityZone": "eu-west-1a",
        "podplan-aws:privateSubnetCidr": "192.168.0.0/24",
    }
    message = config_error("aws", config)
    for expected in (
        "adminCidr must not be the whole internet",
        "fsxThroughputPerTib must be one of 125, 250, 500, 1000",
        "nodeCount must be at least 1",
        "availabilityZone (eu-west-1a) must be a zone of aws:region",
        "privateSubnetCidr (192.168.0.0/24) must lie inside vpcCidr",
    ):
        assert expected in message


def test_missing_secret_says_how_to_set_it(base: Callable[..., Any]) -> None:
    message = config_error("aws", base("aws"), secrets={})
    assert "pulumi config set --secret sshPublicKey" in message


def test_efa_count_must_match_the_instance(base: Callable[..., Any]) -> None:
    message = config_error("aws", base("aws") | {"podplan-aws:efaInterfaces": 16})
    assert "efaInterfaces must be 32 for p5.48xlarge (got 16)" in message


def test_gcp_lustre_capacity_off_the_tier_step(base: Callable[..., Any]) -> None:
    config = base("gcp") | {
        "podplan-gcp:lustreCapacityGib": 10_000,
        "podplan-gcp:lustreThroughputPerTib": 1000,
    }
    message = config_error("gcp", config)
    assert "lustreCapacityGib must be a multiple of 9000 GiB" in message
    assert "nearest valid: 9000 or 18000" in message


def test_gcp_needs_one_subnet_per_gpu_nic(base: Callable[..., Any]) -> None:
    config = base("gcp")
    config["podplan-gcp:gpuSubnetCidrs"] = config["podplan-gcp:gpuSubnetCidrs"][:7]
    assert "gpuSubnetCidrs must list 8 subnets" in config_error("gcp", config)


def test_gcp_subnets_must_not_overlap(base: Callable[..., Any]) -> None:
    config = base("gcp")
    config["podplan-gcp:lustrePeeringCidr"] = config["podplan-gcp:systemSubnetCidr"]
    assert "lustrePeeringCidr" in config_error("gcp", config)


def test_azure_lustre_capacity_off_the_sku_step(base: Callable[..., Any]) -> None:
    config = base("azure") | {
        "podplan-azure:amlfsSku": "AMLFS-Durable-Premium-250",
        "podplan-azure:amlfsCapacityTib": 12,
    }
    message = config_error("azure", config)
    assert "amlfsCapacityTib must be a multiple of 8 TiB" in message
    assert "nearest valid: 8 or 16" in message


def test_azure_rejects_an_unknown_sku(base: Callable[..., Any]) -> None:
    config = base("azure") | {"podplan-azure:amlfsSku": "AMLFS-Durable-Premium-1000"}
    assert "amlfsSku must be one of" in config_error("azure", config)


# -- declared keys == read keys == generated keys --------------------------------------------------


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_pulumi_yaml_declares_exactly_the_keys_read(cloud: str, base: Callable[..., Any]) -> None:
    project = yaml.safe_load(stack_file(cloud).read_text())
    assert project["name"] == f"podplan-{cloud}" and project["runtime"]["name"] == "python"
    declared: dict[str, Any] = project["config"]
    reads = read_config(cloud, base(cloud)).project_keys
    assert sorted(declared) == sorted(reads)
    for key, read in reads.items():
        decl = declared[key]
        assert decl.get("description"), key
        assert decl["type"] == KINDS[read.kind], key
        assert bool(decl.get("secret")) == read.secret, key
        if read.default is None:
            assert "default" not in decl, key
        else:
            assert decl["default"] == read.default, key


@pytest.mark.parametrize(("spec", "cloud"), EXAMPLE_CLOUDS)
def test_generated_config_sets_every_required_key(spec: str, cloud: str, plan_of: PlanOf) -> None:
    declared = yaml.safe_load(stack_file(cloud).read_text())["config"]
    project = f"podplan-{cloud}:"
    config = stack_config(plan_of(spec), cloud)
    written = {k.removeprefix(project) for k in config if k.startswith(project)}
    required = {k for k, d in declared.items() if "default" not in d and not d.get("secret")}
    assert required <= written <= set(declared)
    assert not {k for k, d in declared.items() if d.get("secret")} & written


def test_valid_generated_config_loads(base: Callable[..., Any]) -> None:
    settings = read_config("aws", base("aws")).settings
    assert settings.instance_type == "p5.48xlarge" and settings.efa_interfaces == 32
    assert settings.head_private_ip.endswith(".10")
    assert settings.tags["podplan-cluster"] == "dell-8node-config1"
    assert settings.tags["managed-by"] == "podplan"


def test_gcp_names_fit_63_characters_for_the_longest_cluster_name(
    base: Callable[..., Any],
) -> None:
    """GCP names are <= 63 characters; Pulumi appends 8 to logical names it auto-names."""
    longest = "c" * 40  # the spec's maximum
    run = run_program("gcp", base("gcp") | {"podplan-gcp:clusterName": longest})
    for r in run.custom():
        explicit = r.inputs.get("name") or r.inputs.get("instanceId")
        assert len(explicit or r.name + "-1234567") <= 63, r.name

"""The CrossGuard policies of ``stacks/policy``, called directly as plain functions.

Each rule gets a real ``pulumi_policy.ResourceValidationArgs`` built by hand and a recording
``report_violation``; no Pulumi CLI and no analyzer server (building the PolicyPack would
start one, which is why only the pack's ``__main__.py`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import yaml
from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions, ResourceValidationArgs

from tests.conftest import REPO
from tests.pulumi.harness import import_from_stacks

rules = import_from_stacks("policy", "podplan_policy.rules")
violations: Callable[[str, Mapping[str, Any]], list[tuple[str, str]]] = rules.violations


def validate(rule: Callable[..., None], typ: str, props: Mapping[str, Any]) -> list[str]:
    """Run one rule on a hand-built resource; the messages it reported."""
    reported: list[str] = []
    args = ResourceValidationArgs(
        resource_type=typ,
        props=props,
        urn=f"urn:pulumi:test::podplan::{typ}::r",
        name="r",
        opts=PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), []),
        provider=None,
    )
    rule(args, lambda message, urn=None: reported.append(message))
    return reported


def efa_template(cards: int, first: str = "efa", group: str | None = "pg") -> dict[str, Any]:
    nics = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": first}]
    nics += [
        {"networkCardIndex": c, "deviceIndex": 0, "interfaceType": "efa-only"}
        for c in range(1, cards)
    ]
    props: dict[str, Any] = {"instanceType": "p5.48xlarge", "networkInterfaces": nics}
    if group:
        props["placement"] = {"groupName": group}
    return props


# -- no ingress from the internet --------------------------------------------------------------


@pytest.mark.parametrize(
    ("typ", "props"),
    [
        (
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            {"cidrIpv4": "0.0.0.0/0", "fromPort": 22, "toPort": 22, "ipProtocol": "tcp"},
        ),
        ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", {"cidrIpv6": "::/0"}),
        (
            "aws:ec2/securityGroup:SecurityGroup",
            {"ingress": [{"fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}]},
        ),
        (
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            {"type": "ingress", "cidrBlocks": ["0.0.0.0/0"]},
        ),
        (
            "gcp:compute/firewall:Firewall",
            {"sourceRanges": ["0.0.0.0/0"], "allows": [{"protocol": "tcp"}]},
        ),
        ("gcp:compute/firewall:Firewall", {"allows": [{"protocol": "all"}], "targetTags": ["x"]}),
        (
            "azure-native:network:NetworkSecurityGroup",
            {
                "securityRules": [
                    {
                        "name": "ssh",
                        "direction": "Inbound",
                        "access": "Allow",
                        "sourceAddressPrefix": "*",
                    }
                ]
            },
        ),
        (
            "azure-native:network:NetworkSecurityGroup",
            {
                "securityRules": [
                    {
                        "name": "ssh",
                        "direction": "Inbound",
                        "access": "Allow",
                        "sourceAddressPrefixes": ["10.0.0.0/8", "Internet"],
                    }
                ]
            },
        ),
        (
            "azure-native:network:SecurityRule",
            {"direction": "Inbound", "access": "Allow", "sourceAddressPrefix": "0.0.0.0/0"},
        ),
    ],
)
def test_world_ingress_is_a_violation(typ: str, props: dict[str, Any]) -> None:
    assert validate(rules.no_ingress_from_internet, typ, props)


@pytest.mark.parametrize(
    ("typ", "props"),
    [
        (
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
            {"cidrIpv4": "203.0.113.0/24"},
        ),
        ("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", {"cidrIpv4": "0.0.0.0/0"}),
        (
            "aws:ec2/securityGroupRule:SecurityGroupRule",
            {"type": "egress", "cidrBlocks": ["0.0.0.0/0"]},
        ),
        ("gcp:compute/firewall:Firewall", {"sourceTags": ["n"], "targetTags": ["n"]}),
        (
            "gcp:compute/firewall:Firewall",
            {"direction": "EGRESS", "destinationRanges": ["0.0.0.0/0"]},
        ),
        (
            "azure-native:network:NetworkSecurityGroup",
            {
                "securityRules": [
                    {
                        "name": "deny",
                        "direction": "Inbound",
                        "access": "Deny",
                        "sourceAddressPrefix": "*",
                    },
                    {
                        "name": "out",
                        "direction": "Outbound",
                        "access": "Allow",
                        "sourceAddressPrefix": "*",
                    },
                    {
                        "name": "ssh",
                        "direction": "Inbound",
                        "access": "Allow",
                        "sourceAddressPrefix": "203.0.113.0/24",
                    },
                ]
            },
        ),
    ],
)
def test_narrow_or_outbound_rules_pass(typ: str, props: dict[str, Any]) -> None:
    assert validate(rules.no_ingress_from_internet, typ, props) == []


# -- placement / IB grouping --------------------------------------------------------------------


def test_efa_template_needs_a_placement_group() -> None:
    typ = "aws:ec2/launchTemplate:LaunchTemplate"
    assert validate(rules.gpu_nodes_grouped, typ, efa_template(32, group=None))
    assert validate(rules.gpu_nodes_grouped, typ, efa_template(32)) == []
    pg = "aws:ec2/placementGroup:PlacementGroup"
    assert validate(rules.gpu_nodes_grouped, pg, {"strategy": "spread"})
    assert validate(rules.gpu_nodes_grouped, pg, {"strategy": "cluster"}) == []


def test_a3_vm_needs_a_compact_placement_policy() -> None:
    vm = "gcp:compute/instance:Instance"
    assert validate(rules.gpu_nodes_grouped, vm, {"machineType": "a3-megagpu-8g"})
    assert (
        validate(
            rules.gpu_nodes_grouped, vm, {"machineType": "a3-megagpu-8g", "resourcePolicies": "p"}
        )
        == []
    )
    assert validate(rules.gpu_nodes_grouped, vm, {"machineType": "n2-standard-32"}) == []
    policy = "gcp:compute/resourcePolicy:ResourcePolicy"
    assert validate(
        rules.gpu_nodes_grouped,
        policy,
        {"groupPlacementPolicy": {"collocation": "UNSPECIFIED_COLLOCATION"}},
    )
    assert (
        validate(
            rules.gpu_nodes_grouped, policy, {"groupPlacementPolicy": {"collocation": "COLLOCATED"}}
        )
        == []
    )


@pytest.mark.parametrize(("single", "bad"), [(True, False), (False, True), (None, True)])
def test_infiniband_scale_set_needs_one_placement_group(single: bool | None, bad: bool) -> None:
    props: dict[str, Any] = {"sku": {"name": "Standard_ND96isr_H100_v5", "capacity": 4}}
    if single is not None:
        props["singlePlacementGroup"] = single
    found = validate(rules.gpu_nodes_grouped, "azure-native:compute:VirtualMachineScaleSet", props)
    assert bool(found) is bad


def test_non_infiniband_scale_set_is_not_grouped() -> None:
    props = {"sku": {"name": "Standard_D32s_v5"}, "singlePlacementGroup": False}
    assert (
        validate(rules.gpu_nodes_grouped, "azure-native:compute:VirtualMachineScaleSet", props)
        == []
    )


# -- fabric interfaces --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "first", "bad"), [(32, "efa", False), (31, "efa", True), (32, "efa-only", True)]
)
def test_p5_needs_an_efa_on_each_of_32_cards(cards: int, first: str, bad: bool) -> None:
    found = validate(
        rules.efa_on_every_network_card,
        "aws:ec2/launchTemplate:LaunchTemplate",
        efa_template(cards, first),
    )
    assert bool(found) is bad


def test_p5_efa_on_a_repeated_card_is_a_violation() -> None:
    props = efa_template(32)
    props["networkInterfaces"][5]["networkCardIndex"] = 4
    assert validate(rules.efa_on_every_network_card, "aws:ec2/launchTemplate:LaunchTemplate", props)


def test_a3_mega_needs_eight_gpu_nic_networks() -> None:
    vm = "gcp:compute/instance:Instance"
    nics = [{"subnetwork": f"s{i}"} for i in range(9)]
    assert (
        validate(
            rules.gpu_nic_networks, vm, {"machineType": "a3-megagpu-8g", "networkInterfaces": nics}
        )
        == []
    )
    assert validate(
        rules.gpu_nic_networks, vm, {"machineType": "a3-megagpu-8g", "networkInterfaces": nics[:5]}
    )
    same = [{"subnetwork": "s0"}] * 9
    assert validate(
        rules.gpu_nic_networks, vm, {"machineType": "a3-megagpu-8g", "networkInterfaces": same}
    )


# -- encryption and tags --------------------------------------------------------------------------


def test_block_storage_must_be_encrypted() -> None:
    lt = "aws:ec2/launchTemplate:LaunchTemplate"
    plain = {"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": "false"}}]}
    sealed = {"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": "true"}}]}
    assert validate(rules.storage_encrypted, lt, plain)
    assert validate(rules.storage_encrypted, lt, sealed) == []
    assert validate(
        rules.storage_encrypted,
        "aws:ec2/instance:Instance",
        {"rootBlockDevice": {"encrypted": False}},
    )
    assert validate(rules.storage_encrypted, "aws:ebs/volume:Volume", {"size": 10})
    vmss = "azure-native:compute:VirtualMachineScaleSet"
    assert validate(rules.storage_encrypted, vmss, {"virtualMachineProfile": {}})
    on = {"virtualMachineProfile": {"securityProfile": {"encryptionAtHost": True}}}
    assert validate(rules.storage_encrypted, vmss, on) == []
    assert validate(
        rules.storage_encrypted, "azure-native:compute:VirtualMachine", {"securityProfile": {}}
    )


def test_nodes_and_file_systems_name_their_spec() -> None:
    tags = {"podplan-cluster": "c", "podplan-spec": "examples/c.yaml"}
    assert (
        validate(
            rules.tagged_with_spec, "aws:fsx/lustreFileSystem:LustreFileSystem", {"tags": tags}
        )
        == []
    )
    assert validate(
        rules.tagged_with_spec,
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        {"tags": {"podplan-cluster": "c"}},
    )
    assert validate(rules.tagged_with_spec, "gcp:lustre/instance:Instance", {"labels": tags}) == []
    assert validate(rules.tagged_with_spec, "gcp:compute/instance:Instance", {"tags": ["n"]})
    assert validate(rules.tagged_with_spec, "aws:ec2/vpc:Vpc", {}) == []


# -- the pack -------------------------------------------------------------------------------------


def test_pack_lists_every_rule_once() -> None:
    names = [r.name for r in rules.RULES]
    assert len(names) == len(set(names)) >= 6
    main = (REPO / "stacks/policy/__main__.py").read_text()
    compile(main, "stacks/policy/__main__.py", "exec")  # building the pack would block: don't
    assert "PolicyPack(" in main and "RULES" in main
    pack = yaml.safe_load((REPO / "stacks/policy/PulumiPolicy.yaml").read_text())
    assert pack["runtime"]["name"] == "python"


def test_violations_runs_every_rule() -> None:
    found = violations("aws:ec2/launchTemplate:LaunchTemplate", efa_template(8, group=None))
    assert {name for name, _ in found} == {
        "gpu-nodes-grouped",
        "efa-on-every-network-card",
        "gpu-fabric-complete",
        "tagged-with-spec",
    }

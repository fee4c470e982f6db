"""podplan's cluster policies as plain functions (CrossGuard resource validations).

Each rule has the CrossGuard signature ``rule(args, report_violation)`` and reads only
``args.resource_type`` and ``args.props`` (the resource's inputs, camelCase, as the engine
sends them), so it runs the same under ``pulumi preview --policy-pack stacks/policy`` and when
a test calls it with a hand-built input. Building the ``PolicyPack`` itself starts the analyzer
server, so that happens only in this pack's ``__main__.py``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podplan_policy.base import (
    AWS_FSX,
    AWS_INSTANCE,
    AWS_LAUNCH_TEMPLATE,
    AZURE_AMLFS,
    AZURE_VM,
    AZURE_VMSS,
    EFA_PER_INSTANCE,
    GCP_INSTANCE,
    GCP_LUSTRE,
    GPU_NICS_PER_MACHINE,
    INFINIBAND_SIZE,
    REQUIRED_TAGS,
    WORLD_SOURCES,
    Report,
    ResourceArgs,
    _items,
    _map,
    _truthy,
)
from podplan_policy.bootstrap import gpu_fabric_complete, secrets_not_in_user_data


def _is_world(cidr: object) -> bool:
    if not isinstance(cidr, str):
        return False
    if cidr.strip().lower() in WORLD_SOURCES:
        return True
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen == 0
    except ValueError:
        return False


# -- no ingress from the internet --------------------------------------------------------------


def _aws_world_ingress(typ: str, props: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    if typ == "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule":
        found += [str(c) for c in (props.get("cidrIpv4"), props.get("cidrIpv6")) if _is_world(c)]
    elif typ == "aws:ec2/securityGroupRule:SecurityGroupRule" and props.get("type") == "ingress":
        found += [c for c in _items(props.get("cidrBlocks")) if _is_world(c)]
        found += [c for c in _items(props.get("ipv6CidrBlocks")) if _is_world(c)]
    elif typ == "aws:ec2/securityGroup:SecurityGroup":
        for rule in _items(props.get("ingress")):
            rule = _map(rule)
            found += [c for c in _items(rule.get("cidrBlocks")) if _is_world(c)]
            found += [c for c in _items(rule.get("ipv6CidrBlocks")) if _is_world(c)]
    return found


def _gcp_world_ingress(props: Mapping[str, Any]) -> list[str]:
    if str(props.get("direction") or "INGRESS").upper() != "INGRESS":
        return []
    ranges = _items(props.get("sourceRanges"))
    if not ranges and not props.get("sourceTags") and not props.get("sourceServiceAccounts"):
        return ["(no source: GCP defaults to 0.0.0.0/0)"]
    return [r for r in ranges if _is_world(r)]


def _azure_world_rules(rules: Iterable[Any]) -> list[str]:
    found = []
    for rule in rules:
        rule = _map(rule)
        inbound = str(rule.get("direction", "")).lower() == "inbound"
        allow = str(rule.get("access", "")).lower() == "allow"
        sources = [rule.get("sourceAddressPrefix"), *_items(rule.get("sourceAddressPrefixes"))]
        if inbound and allow and any(_is_world(s) for s in sources):
            found.append(str(rule.get("name", "<unnamed rule>")))
    return found


def no_ingress_from_internet(args: ResourceArgs, report_violation: Report) -> None:
    """Security groups, firewall rules and NSGs admit nothing from 0.0.0.0/0 (SSH included)."""
    typ, props = args.resource_type, args.props
    if typ.startswith("aws:"):
        bad = _aws_world_ingress(typ, props)
    elif typ == "gcp:compute/firewall:Firewall":
        bad = _gcp_world_ingress(props)
    elif typ == "azure-native:network:NetworkSecurityGroup":
        bad = _azure_world_rules(_items(props.get("securityRules")))
    elif typ == "azure-native:network:SecurityRule":
        bad = _azure_world_rules([props])
    else:
        return
    if bad:
        report_violation(f"{typ} admits inbound traffic from the internet: {', '.join(bad)}", None)


# -- placement / InfiniBand grouping ------------------------------------------------------------


def _efa_interfaces(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        _map(n)
        for n in _items(props.get("networkInterfaces"))
        if _map(n).get("interfaceType") in ("efa", "efa-only")
    ]


def gpu_nodes_grouped(args: ResourceArgs, report_violation: Report) -> None:
    """GPU nodes sit in one tightly coupled group: AWS cluster placement group, GCP compact
    placement policy, Azure single placement group (InfiniBand only spans one)."""
    typ, props = args.resource_type, args.props
    if typ == "aws:ec2/placementGroup:PlacementGroup" and props.get("strategy") != "cluster":
        report_violation(
            f"placement group strategy is {props.get('strategy')!r}, not 'cluster'", None
        )
    elif typ == AWS_LAUNCH_TEMPLATE and _efa_interfaces(props):
        if not _map(props.get("placement")).get("groupName"):
            report_violation("EFA launch template has no placement group", None)
    elif typ == GCP_INSTANCE and str(props.get("machineType", "")) in GPU_NICS_PER_MACHINE:
        if not props.get("resourcePolicies"):
            report_violation(f"{props.get('machineType')} VM has no compact placement policy", None)
    elif typ == "gcp:compute/resourcePolicy:ResourcePolicy":
        group = _map(props.get("groupPlacementPolicy"))
        if group and group.get("collocation") != "COLLOCATED":
            report_violation("group placement policy is not COLLOCATED (compact)", None)
    elif (
        typ == AZURE_VMSS
        and INFINIBAND_SIZE.match(str(_map(props.get("sku")).get("name", "")))
        and props.get("singlePlacementGroup") is not True
    ):
        report_violation(
            "InfiniBand scale set must set singlePlacementGroup: IB spans one placement group",
            None,
        )


# -- fabric interfaces ----------------------------------------------------------------------------


def efa_on_every_network_card(args: ResourceArgs, report_violation: Report) -> None:
    """A p5-class launch template has one EFA device on every network card (32 on p5)."""
    if args.resource_type != AWS_LAUNCH_TEMPLATE:
        return
    instance_type = str(args.props.get("instanceType", ""))
    expected = EFA_PER_INSTANCE.get(instance_type)
    if expected is None:
        return
    efa = _efa_interfaces(args.props)
    cards = sorted({int(n.get("networkCardIndex", 0)) for n in efa})
    if len(efa) != expected or cards != list(range(expected)):
        report_violation(
            f"{instance_type} needs {expected} EFA interfaces, one per network card "
            f"0-{expected - 1}; found {len(efa)} on cards {cards}",
            None,
        )
    primary = [
        n
        for n in efa
        if int(n.get("networkCardIndex", -1)) == 0 and int(n.get("deviceIndex", -1)) == 0
    ]
    if any(n.get("interfaceType") == "efa-only" for n in primary):
        report_violation("the primary interface (card 0, device 0) cannot be EFA-only", None)


def gpu_nic_networks(args: ResourceArgs, report_violation: Report) -> None:
    """An A3 VM has its system NIC plus one NIC in each GPU network (8 on a3-megagpu-8g)."""
    if args.resource_type != GCP_INSTANCE:
        return
    machine = str(args.props.get("machineType", ""))
    gpu_nics = GPU_NICS_PER_MACHINE.get(machine)
    if gpu_nics is None:
        return
    nics = [_map(n) for n in _items(args.props.get("networkInterfaces"))]
    subnets = {n.get("subnetwork") or n.get("network") for n in nics}
    if len(nics) != gpu_nics + 1 or len(subnets) != len(nics):
        report_violation(
            f"{machine} needs 1 + {gpu_nics} NICs in distinct networks; found {len(nics)} NICs "
            f"in {len(subnets)} networks",
            None,
        )


# -- encryption at rest ---------------------------------------------------------------------------


def storage_encrypted(args: ResourceArgs, report_violation: Report) -> None:
    """Block storage is encrypted at rest (managed file systems and GCP disks always are)."""
    typ, props = args.resource_type, args.props
    if typ == AWS_LAUNCH_TEMPLATE:
        for mapping in _items(props.get("blockDeviceMappings")):
            ebs = _map(_map(mapping).get("ebs"))
            if ebs and not _truthy(ebs.get("encrypted")):
                report_violation(
                    f"EBS volume {_map(mapping).get('deviceName')} is not encrypted", None
                )
    elif typ == AWS_INSTANCE:
        root = _map(props.get("rootBlockDevice"))
        if root and not _truthy(root.get("encrypted")):
            report_violation("root volume is not encrypted", None)
        for ebs in _items(props.get("ebsBlockDevices")):
            if not _truthy(_map(ebs).get("encrypted")):
                report_violation(f"EBS volume {_map(ebs).get('deviceName')} is not encrypted", None)
    elif typ == "aws:ebs/volume:Volume" and not _truthy(props.get("encrypted")):
        report_violation("EBS volume is not encrypted", None)
    elif typ in (AZURE_VM, AZURE_VMSS):
        profile = props if typ == AZURE_VM else _map(props.get("virtualMachineProfile"))
        if _map(profile.get("securityProfile")).get("encryptionAtHost") is not True:
            report_violation(
                "encryption at host is off: temp disks and caches are not encrypted", None
            )


# -- tags ------------------------------------------------------------------------------------------


def tagged_with_spec(args: ResourceArgs, report_violation: Report) -> None:
    """Nodes and file systems carry the podplan-cluster and podplan-spec tags (GCP: labels)."""
    typ, props = args.resource_type, args.props
    if typ in (AWS_INSTANCE, AWS_LAUNCH_TEMPLATE, AWS_FSX, AZURE_VM, AZURE_VMSS, AZURE_AMLFS):
        tags = _map(props.get("tags"))
    elif typ in (GCP_INSTANCE, GCP_LUSTRE):
        tags = _map(props.get("labels"))
    else:
        return
    missing = [t for t in REQUIRED_TAGS if not tags.get(t)]
    if missing:
        report_violation(f"missing tags: {', '.join(missing)}", None)


@dataclass(frozen=True)
class Rule:
    """A named policy: CrossGuard name, description and validation function."""

    name: str
    description: str
    validate: Callable[[ResourceArgs, Report], None]


RULES: Sequence[Rule] = (
    Rule(
        "no-ingress-from-internet",
        "Nothing (SSH included) is reachable from 0.0.0.0/0.",
        no_ingress_from_internet,
    ),
    Rule(
        "gpu-nodes-grouped",
        "GPU nodes are in one cluster/compact/IB placement group.",
        gpu_nodes_grouped,
    ),
    Rule(
        "efa-on-every-network-card",
        "p5-class nodes carry one EFA per network card (32).",
        efa_on_every_network_card,
    ),
    Rule(
        "gpu-nic-networks",
        "A3 VMs have one NIC in each GPU network (8 on A3 Mega).",
        gpu_nic_networks,
    ),
    Rule(
        "gpu-fabric-complete",
        "GPU nodes set up and check their whole fabric at boot (EFA, TCPXO, InfiniBand).",
        gpu_fabric_complete,
    ),
    Rule(
        "secrets-not-in-user-data",
        "No key material in user data or metadata; the munge key comes from a secret store.",
        secrets_not_in_user_data,
    ),
    Rule("storage-encrypted", "Block storage is encrypted at rest.", storage_encrypted),
    Rule(
        "tagged-with-spec",
        "Nodes and file systems name their podplan cluster and spec.",
        tagged_with_spec,
    ),
)


@dataclass(frozen=True)
class _Args:
    resource_type: str
    props: Mapping[str, Any]


def violations(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every ``(rule name, message)`` the rules report for one resource's inputs."""
    found: list[tuple[str, str]] = []
    for rule in RULES:

        def report(message: str, urn: str | None = None, _name: str = rule.name) -> None:
            found.append((_name, message))

        rule.validate(_Args(resource_type, props), report)
    return found

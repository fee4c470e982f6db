"""The boot policies: every GPU node sets up and checks its whole fabric, and no key material
travels in user data. Hand-built resources for each way to get it wrong, then the real stack
programs (every example x cloud) with the munge key they generate nowhere but in the secret."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from tests.pulumi.conftest import EXAMPLE_CLOUD_PARAMS
from tests.pulumi.harness import StackRun, import_from_stacks, unsecret

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

boot = import_from_stacks("policy", "podplan_policy.bootstrap")
kit = import_from_stacks("common", "podplan_stackkit.bootstrap")
rules = import_from_stacks("policy", "podplan_policy.rules")

LT = "aws:ec2/launchTemplate:LaunchTemplate"
GCE = "gcp:compute/instance:Instance"
VMSS = "azure-native:compute:VirtualMachineScaleSet"


def user_data(kind: str | None, devices: int = 0, secret: str = "arn:aws:secretsmanager:x") -> str:
    fabric = (
        kit.Fabric(kind=kind, devices=devices, state="ACTIVE", setup="", devices_script="", env="")
        if kind
        else None
    )
    b = kit.ClusterBoot(
        cluster_name="c",
        spec_file="s.yaml",
        head_hostname="c-head",
        head_address="10.0.0.10",
        gpus_per_node=8,
        max_nodes=2,
        node_feature="x",
        seams=kit.CloudSeams(node_name="#!/bin/sh\n", munge_key="#!/bin/sh\n"),
        fabric=fabric,
        env={"PODPLAN_MUNGE_SECRET": secret},
    )
    return str(kit.compute_user_data(b, kit.SharedMount("fs@tcp:/x")))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def reported(rule: Callable[..., None], typ: str, props: dict[str, Any]) -> list[str]:
    out: list[str] = []

    class Args:
        resource_type = typ

    Args.props = props  # type: ignore[attr-defined]
    rule(Args(), lambda message, urn=None: out.append(message))
    return out


def p5(text: str) -> dict[str, Any]:
    return {"instanceType": "p5.48xlarge", "userData": b64(text)}


def a3(text: str, nic: str = "GVNIC") -> dict[str, Any]:
    nics = [{"subnetwork": f"s{i}", "nicType": nic} for i in range(9)]
    return {
        "machineType": "a3-megagpu-8g",
        "metadata": {"user-data": text},
        "networkInterfaces": nics,
    }


def nd(text: str) -> dict[str, Any]:
    return {
        "sku": {"name": "Standard_ND96isr_H100_v5"},
        "virtualMachineProfile": {"osProfile": {"customData": b64(text)}},
    }


@pytest.mark.parametrize(
    ("typ", "props", "problem"),
    [
        (LT, p5(user_data("efa", 32)), None),
        (LT, p5(user_data(None)), "needs efa set up and checked at boot; found no fabric setup"),
        (LT, p5(user_data("efa", 16)), "must expect 32 efa devices (expects 16)"),
        (LT, {"instanceType": "p5.48xlarge"}, "found no fabric setup"),
        (GCE, a3(user_data("tcpxo", 8)), None),
        (GCE, a3(user_data("efa", 8)), "needs tcpxo set up and checked at boot; found efa"),
        (GCE, a3(user_data("tcpxo", 8), nic="VIRTIO_NET"), "needs gVNIC on every NIC"),
        (VMSS, nd(user_data("infiniband", 8)), None),
        (VMSS, nd(user_data(None)), "needs infiniband set up"),
        (LT, {"instanceType": "m7i.8xlarge", "userData": b64(user_data(None))}, None),
    ],
)
def test_gpu_nodes_set_up_and_check_their_whole_fabric(
    typ: str, props: dict[str, Any], problem: str | None
) -> None:
    found = reported(boot.gpu_fabric_complete, typ, props)
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0], found


MUNGE_IN_USER_DATA = """#cloud-config
write_files:
- path: /etc/munge/munge.key
  encoding: b64
  content: c2VjcmV0
"""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (user_data("efa", 32), None),
        (MUNGE_IN_USER_DATA, "key material written to /etc/munge/munge.key"),
        ("#!/bin/sh\necho '-----BEGIN OPENSSH PRIVATE KEY-----'\n", "a PEM private key"),
        ("#!/bin/sh\nKEY=" + "QUJD" * 100 + "\n", "a long base64 blob"),
        ("#!/bin/sh\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n", "an AWS access key id"),
        (user_data("efa", 32, secret=""), "no secret store named for the munge key"),
    ],
)
def test_no_key_material_in_user_data(text: str, problem: str | None) -> None:
    found = reported(boot.secrets_not_in_user_data, LT, p5(text))
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0], found


def test_gcp_metadata_beyond_user_data_is_scanned_too() -> None:
    props = a3(user_data("tcpxo", 8)) | {}
    props["metadata"] = {**props["metadata"], "munge": "QUJD" * 100}
    found = reported(boot.secrets_not_in_user_data, GCE, props)
    assert found and "metadata munge: a long base64 blob" in found[0]


def test_the_pack_carries_the_boot_rules() -> None:
    names = {r.name for r in rules.RULES}
    assert {"gpu-fabric-complete", "secrets-not-in-user-data"} <= names


SECRET_TYPES = {
    "aws:secretsmanager/secretVersion:SecretVersion": ("secretString",),
    "gcp:secretmanager/secretVersion:SecretVersion": ("secretData",),
    "azure-native:keyvault:Secret": ("properties", "value"),
}


def _munge_key(run: StackRun) -> tuple[str, str]:
    for typ, path in SECRET_TYPES.items():
        for r in run.of(typ):
            value: Any = unsecret(r.inputs)
            for step in path:
                value = value[step]
            return r.name, str(value)
    raise AssertionError("the program stores no munge key in a secret store")


@pytest.mark.parametrize(("spec", "cloud"), EXAMPLE_CLOUD_PARAMS)
def test_the_munge_key_lives_only_in_the_secret_store(
    spec: str, cloud: str, stack_run: Callable[[str, str], StackRun]
) -> None:
    run = stack_run(spec, cloud)
    holder, key = _munge_key(run)
    assert len(base64.b64decode(key)) == 1024
    for r in run.custom():
        text = repr(unsecret(r.inputs))
        if r.name != holder:
            assert key not in text, f"{r.typ} {r.name} carries the munge key"
        ud = boot.user_data(r.typ, unsecret(r.inputs))
        if ud:
            assert key not in ud and key[:64] not in ud

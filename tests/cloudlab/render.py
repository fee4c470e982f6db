"""What the cloud lab boots: the user data a real stack program renders under Pulumi mocks.

``render(cloud, config)`` runs ``stacks/<cloud>/__main__.py`` under the recording mocks of
``tests/pulumi/harness.py`` with a ``podplan plan`` stack configuration whose address ranges
are moved into the lab's link-local network (``LAB_NETWORKS``, the only change), and returns
the head's and the GPU nodes' user data exactly as the cloud would hand it to the VMs (base64
launch-template/customData decoded, as EC2 and Azure do), the munge key the program put into
the cloud's secret store, and the node names the cloud would give. ``write_seeds`` lays that
out as NoCloud seeds for ``cloudlab.sh up``.
"""

from __future__ import annotations

import base64
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.pulumi.harness import StackRun, run_program, unsecret

HERE = Path(__file__).resolve().parent
NET = "169.254.78"
PREFIX = 26
SLICES = {"aws": 0, "gcp": 64, "azure": 128}
"""Each cloud's cluster lives in its own /26 of the lab network, so all three boot at once
without reaching each other."""


def head_address(cloud: str) -> str:
    """The head's fixed address: the .10 of the cloud's head subnet (see LAB_NETWORKS)."""
    return f"{NET}.{SLICES[cloud] + 10}"


def gpu_address(cloud: str, index: int) -> str:
    """The ``index``-th GPU node's address, inside the cloud's GPU subnet."""
    return f"{NET}.{SLICES[cloud] + 40 + index}"


LAB_NETWORKS: dict[str, dict[str, Any]] = {
    "aws": {
        "podplan-aws:vpcCidr": f"{NET}.0/26",
        "podplan-aws:publicSubnetCidr": f"{NET}.0/27",
        "podplan-aws:privateSubnetCidr": f"{NET}.32/27",
    },
    "gcp": {
        "podplan-gcp:systemSubnetCidr": f"{NET}.64/26",
        "podplan-gcp:gpuSubnetCidrs": [f"169.254.79.{32 * i}/27" for i in range(8)],
        "podplan-gcp:lustrePeeringCidr": "169.254.80.0/24",
    },
    "azure": {
        "podplan-azure:vnetCidr": f"{NET}.128/25",
        "podplan-azure:computeSubnetCidr": f"{NET}.128/26",
        "podplan-azure:lustreSubnetCidr": f"{NET}.192/26",
    },
}
"""The lab's network as each cloud's address keys: the head's fixed address (the subnet's
.10) and the GPU nodes land in the cloud's /26; the other ranges only need to be valid."""


@dataclass(frozen=True)
class Rendered:
    """One stack program's bootstrap, as the VMs would receive it."""

    cloud: str
    head_name: str
    head_user_data: str
    compute_user_data: str
    compute_names: list[str]
    munge_key_b64: str
    run: StackRun


def lab_config(cloud: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The generated stack configuration with its address ranges in the lab network."""
    return {**config, **LAB_NETWORKS[cloud]}


def _b64(text: str) -> str:
    return base64.b64decode(text).decode()


def render(cloud: str, config: Mapping[str, Any]) -> Rendered:
    """Run the real program under mocks with ``config`` and pick out what the VMs get."""
    run = run_program(cloud, lab_config(cloud, config))
    return _PICK[cloud](run)


def _aws(run: StackRun) -> Rendered:
    instances = run.of("aws:ec2/instance:Instance")
    head = next(i for i in instances if "userData" in i.inputs)
    gpu_lt = next(
        t
        for t in run.of("aws:ec2/launchTemplate:LaunchTemplate")
        if t.inputs.get("networkInterfaces")
    )
    secret = run.one("aws:secretsmanager/secretVersion:SecretVersion")
    return Rendered(
        cloud="aws",
        head_name=head.inputs["tags"]["Name"],
        head_user_data=unsecret(head.inputs)["userData"],
        compute_user_data=_b64(unsecret(gpu_lt.inputs)["userData"]),
        compute_names=list(run.outputs["computeNodeNames"]),
        munge_key_b64=unsecret(secret.inputs)["secretString"],
        run=run,
    )


def _gcp(run: StackRun) -> Rendered:
    vms = run.of("gcp:compute/instance:Instance")
    head = next(v for v in vms if v.inputs["networkInterfaces"][0].get("accessConfigs"))
    gpu = next(v for v in vms if v is not head)
    secret = run.one("gcp:secretmanager/secretVersion:SecretVersion")
    return Rendered(
        cloud="gcp",
        head_name=head.inputs["name"],
        head_user_data=unsecret(head.inputs)["metadata"]["user-data"],
        compute_user_data=unsecret(gpu.inputs)["metadata"]["user-data"],
        compute_names=list(run.outputs["computeNodeNames"]),
        munge_key_b64=unsecret(secret.inputs)["secretData"],
        run=run,
    )


def _azure(run: StackRun) -> Rendered:
    vm = run.one("azure-native:compute:VirtualMachine")
    vmss = run.one("azure-native:compute:VirtualMachineScaleSet")
    secret = run.one("azure-native:keyvault:Secret")
    profile = unsecret(vmss.inputs)["virtualMachineProfile"]
    return Rendered(
        cloud="azure",
        head_name=unsecret(vm.inputs)["osProfile"]["computerName"],
        head_user_data=_b64(unsecret(vm.inputs)["osProfile"]["customData"]),
        compute_user_data=_b64(profile["osProfile"]["customData"]),
        compute_names=list(run.outputs["computeNodeNames"]),
        munge_key_b64=unsecret(secret.inputs)["properties"]["value"],
        run=run,
    )


_PICK = {"aws": _aws, "gcp": _gcp, "azure": _azure}


@dataclass(frozen=True)
class LabHost:
    """One instance the lab boots: its seed directory name, address and cloud facts."""

    cloud: str
    seed: str
    address: str
    name: str
    """The name the cloud gives the instance (Name tag, VM name, computer name)."""
    user_data: str
    munge_key_b64: str | None
    """What the lab's secret store hands this instance (None: access denied)."""
    fabric_devices: list[tuple[str, str]]
    """The fabric devices the lab attaches: ``(device, state)``."""


def metadata_hostname(host: LabHost) -> str:
    """The host name the cloud's metadata gives the instance before the bootstrap runs."""
    if host.cloud == "aws":
        return "ip-" + host.address.replace(".", "-")  # EC2's default; the Name tag comes later
    return host.name


def write_seeds(root: Path, hosts: list[LabHost]) -> Path:
    """One ``<seed>/`` per host: address, NoCloud seed (user data untouched), lab cloud."""
    shutil.rmtree(root, ignore_errors=True)
    for host in hosts:
        d = root / host.seed
        (d / "nocloud").mkdir(parents=True)
        (d / "cloud").mkdir()
        hostname = metadata_hostname(host)
        (d / "address").write_text(f"{host.address}/{PREFIX}\n")
        (d / "hostname").write_text(hostname + "\n")
        (d / "nocloud" / "user-data").write_text(host.user_data)
        (d / "nocloud" / "meta-data").write_text(
            f"instance-id: {host.cloud}-{host.seed}\nlocal-hostname: {hostname}\n"
        )
        shutil.copy(HERE / "vendor-data", d / "nocloud" / "vendor-data")
        (d / "cloud" / "name").write_text(host.name + "\n")
        if host.munge_key_b64 is not None:
            (d / "cloud" / "munge-key").write_text(host.munge_key_b64)
        (d / "cloud" / "fabric").write_text(
            "".join(f"{dev} {state}\n" for dev, state in host.fabric_devices)
        )
    return root

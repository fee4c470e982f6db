"""What every podplan policy shares: the rule signature, resource type tokens, the instance
types each cloud's GPU fabric is known for, and tolerant readers of resource inputs."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

Report = Callable[[str, str | None], None]

WORLD_SOURCES = {"*", "any", "internet", "0.0.0.0/0", "::/0"}
EFA_PER_INSTANCE = {"p5.48xlarge": 32, "p5e.48xlarge": 32, "p5en.48xlarge": 16}
GPU_NICS_PER_MACHINE = {"a3-megagpu-8g": 8, "a3-highgpu-8g": 4}
INFINIBAND_SIZE = re.compile(r"Standard_ND\d+\w*r\w*_", re.IGNORECASE)
"""Azure ND sizes with RDMA ("r") InfiniBand, e.g. Standard_ND96isr_H100_v5."""
REQUIRED_TAGS = ("podplan-cluster", "podplan-spec")

AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AWS_INSTANCE = "aws:ec2/instance:Instance"
AWS_FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
GCP_INSTANCE = "gcp:compute/instance:Instance"
GCP_LUSTRE = "gcp:lustre/instance:Instance"
AZURE_VMSS = "azure-native:compute:VirtualMachineScaleSet"
AZURE_VM = "azure-native:compute:VirtualMachine"
AZURE_AMLFS = "azure-native:storagecache:AmlFilesystem"


class ResourceArgs(Protocol):
    """What the rules read of ``pulumi_policy.ResourceValidationArgs``."""

    @property
    def resource_type(self) -> str: ...

    @property
    def props(self) -> Mapping[str, Any]: ...


def _items(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _truthy(value: object) -> bool:
    """A boolean input, which AWS launch templates carry as the string "true"."""
    return value is True or (isinstance(value, str) and value.lower() == "true")

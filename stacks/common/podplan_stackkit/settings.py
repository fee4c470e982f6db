"""The settings every cloud's stack shares, read and checked once, here.

Each stack's ``config.load()`` starts with :func:`read_cluster` and builds its own settings
class on top of :class:`ClusterSettings` (a frozen, keyword-only dataclass the cloud's class
extends with only its per-cloud fields), so the cluster's name, size, node names, admin
access, mount point, tags and SSH key are read, validated and named the same way on AWS,
Google Cloud and Azure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pulumi

from podplan_stackkit.config import ConfigReader, admin_cidr_problem

NAME_PATTERN = r"[a-z][a-z0-9-]{0,38}[a-z0-9]"
"""Spec names (40 chars at most), starting with a letter as GCP resource names must."""
USER_PATTERN = r"[a-z_][a-z0-9_-]{0,31}"
MOUNT_PATTERN = r"/[A-Za-z0-9._/-]+"
SSH_KEY_HINT = '"$(cat ~/.ssh/id_ed25519.pub)"'


@dataclass(frozen=True, kw_only=True)
class ClusterSettings:
    """What every cloud's program needs about the cluster, typed and checked."""

    cluster_name: str
    spec_file: str
    instance_type: str
    node_count: int
    gpus_per_node: int
    head_instance_type: str
    admin_cidr: str
    admin_user: str
    mount_point: str
    tags: dict[str, str]
    ssh_public_key: pulumi.Output[str]

    @property
    def head_hostname(self) -> str:
        return f"{self.cluster_name}-head"

    def node_names(self) -> list[str]:
        """Host (and Slurm node) names of the GPU nodes, in order."""
        width = max(3, len(str(self.node_count)))
        return [f"{self.cluster_name}-gpu-{i:0{width}d}" for i in range(1, self.node_count + 1)]

    def common(self) -> dict[str, Any]:
        """These fields as keyword arguments, to build a cloud's settings on top of them."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(ClusterSettings)}


@dataclass(frozen=True)
class InstanceTypes:
    """How a cloud spells its instance types (a pattern and a word for the messages)."""

    pattern: str
    what: str


def read_cluster(r: ConfigReader, types: InstanceTypes, *, admin_user: str) -> ClusterSettings:
    """Read the shared keys; problems are recorded on ``r`` (raise with the cloud's own)."""
    cluster = r.string("clusterName", pattern=NAME_PATTERN, what="lower-case letters, digits, -")
    spec = r.string("specFile")
    instance_type = r.string("instanceType", pattern=types.pattern, what=types.what)
    node_count = r.integer("nodeCount", minimum=1)
    gpus = r.integer("gpusPerNode", minimum=1, maximum=16)
    head_type = r.string("headInstanceType", pattern=types.pattern, what=types.what)
    admin = r.cidr("adminCidr")
    if r.ok("adminCidr") and (problem := admin_cidr_problem(admin)):
        r.fail("adminCidr", problem)
    user = r.string("adminUser", admin_user, pattern=USER_PATTERN, what="a user name")
    mount_point = r.string("mountPoint", "/shared", pattern=MOUNT_PATTERN, what="a path")
    tags = r.tags("tags", {"podplan-cluster": cluster, "podplan-spec": spec})
    key = r.secret("sshPublicKey", SSH_KEY_HINT)
    return ClusterSettings(
        cluster_name=cluster,
        spec_file=spec,
        instance_type=instance_type,
        node_count=node_count,
        gpus_per_node=gpus,
        head_instance_type=head_type,
        admin_cidr=str(admin),
        admin_user=user,
        mount_point=mount_point,
        tags=tags,
        ssh_public_key=key,
    )

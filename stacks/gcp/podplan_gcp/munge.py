"""The cluster's munge key: generated once by Pulumi, kept in Secret Manager, readable only by
the cluster's own VMs (their service account is Secret Accessor on this one secret).

The key never appears in instance metadata, on the shared file system or in a log; it lives
in the Pulumi state only as an encrypted secret output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
from podplan_stackkit.munge import munge_key_bytes


@dataclass
class MungeKeyArgs:
    cluster_name: str
    labels: dict[str, str]


class MungeKey(pulumi.ComponentResource):
    """Random key + Secret Manager secret + the node service account that may read it."""

    secret_name: pulumi.Output[str]
    """``projects/<project>/secrets/<id>``: what the nodes ask Secret Manager for."""
    service_account_email: pulumi.Output[str]

    def __init__(
        self, name: str, args: MungeKeyArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:gcp:MungeKey", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        key = munge_key_bytes(name, self)
        secret = gcp.secretmanager.Secret(
            f"{name}-secret",
            secret_id=f"{args.cluster_name}-munge-key",
            replication=gcp.secretmanager.SecretReplicationArgs(
                auto=gcp.secretmanager.SecretReplicationAutoArgs()
            ),
            labels=args.labels,
            opts=child,
        )
        version = gcp.secretmanager.SecretVersion(
            f"{name}-version", secret=secret.id, secret_data=key.base64, opts=child
        )
        account = gcp.serviceaccount.Account(
            f"{name}-sa",
            account_id=_account_id(args.cluster_name),
            display_name=f"podplan {args.cluster_name} nodes (reads the munge key)",
            opts=child,
        )
        gcp.secretmanager.SecretIamMember(
            f"{name}-reader",
            secret_id=secret.id,
            role="roles/secretmanager.secretAccessor",
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[version]),
        )
        self.secret_name = secret.id
        self.service_account_email = account.email
        self.register_outputs({"secret_name": secret.id, "service_account_email": account.email})


def _account_id(cluster: str) -> str:
    """A service account id (6-30 characters, [a-z][a-z0-9-]*[a-z0-9]) for the cluster."""
    base = re.sub(r"-+$", "", cluster[:24])
    return f"{base}-nodes"

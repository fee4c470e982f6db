"""The cluster's munge key: generated once by Pulumi, kept in AWS Secrets Manager, readable
only by the cluster's own instances (an instance profile whose role may read this secret).

The key never appears in user data, on the shared file system or in a log; it lives in the
Pulumi state only as an encrypted secret output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
from podplan_stackkit.munge import munge_key_bytes


@dataclass
class MungeKeyArgs:
    cluster_name: str
    kms_key_id: str | None
    tags: dict[str, str]


class MungeKey(pulumi.ComponentResource):
    """Random key + Secrets Manager secret + the node role and instance profile to read it."""

    secret_arn: pulumi.Output[str]
    instance_profile_arn: pulumi.Output[str]

    def __init__(
        self, name: str, args: MungeKeyArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:aws:MungeKey", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        key = munge_key_bytes(name, self)
        secret = aws.secretsmanager.Secret(
            f"{name}-secret",
            name_prefix=f"{args.cluster_name}-munge-",
            description=f"munge key of the podplan cluster {args.cluster_name} (base64)",
            kms_key_id=args.kms_key_id,
            recovery_window_in_days=0,
            tags=args.tags,
            opts=child,
        )
        version = aws.secretsmanager.SecretVersion(
            f"{name}-version", secret_id=secret.id, secret_string=key.base64, opts=child
        )
        role = aws.iam.Role(
            f"{name}-node-role",
            name_prefix=f"{args.cluster_name[:30]}-node-",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "ec2.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
            tags=args.tags,
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-read",
            role=role.id,
            policy=secret.arn.apply(lambda arn: _read_policy(arn, args.kms_key_id)),
            opts=child,
        )
        profile = aws.iam.InstanceProfile(
            f"{name}-profile",
            name_prefix=f"{args.cluster_name[:30]}-node-",
            role=role.name,
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[version]),
        )
        self.secret_arn = secret.arn
        self.instance_profile_arn = profile.arn
        self.register_outputs({"secret_arn": secret.arn, "instance_profile_arn": profile.arn})


def _read_policy(secret_arn: str, kms_key_id: str | None) -> str:
    """Least privilege: read this one secret, and decrypt with its customer key if it has one
    (with the AWS-managed key Secrets Manager decrypts on the caller's behalf)."""
    statements: list[dict[str, str]] = [
        {"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": secret_arn}
    ]
    if kms_key_id:
        statements.append({"Effect": "Allow", "Action": "kms:Decrypt", "Resource": kms_key_id})
    return json.dumps({"Version": "2012-10-17", "Statement": statements})

"""The cluster's munge key: generated once by Pulumi, kept in Azure Key Vault, readable only by
the cluster's own VMs (their user-assigned managed identity is "Key Vault Secrets User" on
this one secret; the vault admits the compute subnet only).

The key never appears in custom data, on the shared file system or in a log; it lives in the
Pulumi state only as an encrypted secret output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pulumi
import pulumi_random as random
from podplan_stackkit.munge import munge_key_bytes
from pulumi_azure_native import authorization, keyvault, managedidentity

SECRETS_USER_ROLE = "4633458b-17de-408a-b874-0445c86b69e6"
"""Built-in role "Key Vault Secrets User": read secret contents, nothing else."""
SECRET_NAME = "munge-key"


@dataclass
class MungeKeyArgs:
    cluster_name: str
    resource_group_name: pulumi.Input[str]
    location: str
    subnet_id: pulumi.Input[str]
    """The only subnet the vault admits (it needs the Microsoft.KeyVault service endpoint)."""
    tags: dict[str, str]


class MungeKey(pulumi.ComponentResource):
    """Random key + Key Vault + secret + the nodes' managed identity that may read it."""

    secret_url: pulumi.Output[str]
    identity_id: pulumi.Output[str]
    identity_client_id: pulumi.Output[str]

    def __init__(
        self, name: str, args: MungeKeyArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("podplan:azure:MungeKey", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        )
        key = munge_key_bytes(name, self)
        suffix = random.RandomString(
            f"{name}-suffix", length=6, special=False, upper=False, opts=child
        )
        vault_name = suffix.result.apply(lambda s: vault_name_for(args.cluster_name, s))
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_group_name=args.resource_group_name,
            location=args.location,
            tags=args.tags,
            opts=child,
        )
        vault = keyvault.Vault(
            f"{name}-vault",
            vault_name=vault_name,
            resource_group_name=args.resource_group_name,
            location=args.location,
            properties=keyvault.VaultPropertiesArgs(
                tenant_id=client.tenant_id,
                sku=keyvault.SkuArgs(family="A", name=keyvault.SkuName.STANDARD),
                enable_rbac_authorization=True,
                soft_delete_retention_in_days=7,
                network_acls=keyvault.NetworkRuleSetArgs(
                    default_action="Deny",
                    bypass="AzureServices",
                    virtual_network_rules=[keyvault.VirtualNetworkRuleArgs(id=args.subnet_id)],
                ),
            ),
            tags=args.tags,
            opts=child,
        )
        secret = keyvault.Secret(
            f"{name}-secret",
            resource_group_name=args.resource_group_name,
            vault_name=vault.name,
            secret_name=SECRET_NAME,
            properties=keyvault.SecretPropertiesArgs(value=key.base64),
            opts=child,
        )
        authorization.RoleAssignment(
            f"{name}-reader",
            principal_id=identity.principal_id,
            principal_type=authorization.PrincipalType.SERVICE_PRINCIPAL,
            role_definition_id=client.subscription_id.apply(
                lambda sub: (
                    f"/subscriptions/{sub}/providers/Microsoft.Authorization"
                    f"/roleDefinitions/{SECRETS_USER_ROLE}"
                )
            ),
            scope=secret.id,
            opts=child,
        )
        self.secret_url = vault_name.apply(
            lambda v: f"https://{v}.vault.azure.net/secrets/{SECRET_NAME}"
        )
        self.identity_id = identity.id
        self.identity_client_id = identity.client_id
        self.register_outputs(
            {
                "secret_url": self.secret_url,
                "identity_id": identity.id,
                "identity_client_id": identity.client_id,
            }
        )


def vault_name_for(cluster: str, suffix: str) -> str:
    """A Key Vault name (3-24 characters, letters, digits and single hyphens) that is new for
    every stack: vault names are global, and a deleted vault keeps its name for days."""
    base = re.sub(r"-+", "-", cluster[:13]).strip("-")
    return f"{base}-kv-{suffix}"

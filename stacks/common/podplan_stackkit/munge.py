"""The munge key every cloud's stack generates the same way; where it is kept (the cloud's
secret store) and who may read it stay with each cloud's ``munge.py``."""

from __future__ import annotations

import pulumi
import pulumi_random as random

MUNGE_KEY_BYTES = 1024
"""The size munge's own ``mungekey`` creates by default."""


def munge_key_bytes(name: str, parent: pulumi.Resource) -> random.RandomBytes:
    """The cluster's munge key: random bytes generated once by Pulumi, a secret output that
    the Pulumi state keeps encrypted (read ``.base64`` to store it)."""
    return random.RandomBytes(
        f"{name}-bytes", length=MUNGE_KEY_BYTES, opts=pulumi.ResourceOptions(parent=parent)
    )

"""Policies on what GPU nodes boot with: the fabric set up and checked, no secret in user data.

The rules read a node's cloud-init user data the way the VM will get it (base64 decoded where
the API carries it so) and, inside it, podplan's ``/etc/podplan/bootstrap.env``: the facts
the boot-time fabric check and the munge-key seam work from.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import yaml

from podplan_policy.base import (
    AWS_INSTANCE,
    AWS_LAUNCH_TEMPLATE,
    AZURE_VM,
    AZURE_VMSS,
    EFA_PER_INSTANCE,
    GCP_INSTANCE,
    GPU_NICS_PER_MACHINE,
    INFINIBAND_SIZE,
    Report,
    ResourceArgs,
    _items,
    _map,
)

BOOTSTRAP_ENV = "/etc/podplan/bootstrap.env"
IB_HCAS = 8
"""InfiniBand HCAs of the ND H100/H200 v5 sizes (one NDR ConnectX-7 per GPU)."""
TCPXO_MACHINES = {"a3-megagpu-8g"}
"""A3 Mega: GPUDirect-TCPXO (A3 High uses GPUDirect-TCPX, a different stack)."""
SECRET_MARKERS = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a PEM private key"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"aws_secret_access_key", re.IGNORECASE), "an AWS secret access key"),
    (re.compile(r"[A-Za-z0-9+/]{340,}={0,2}"), "a long base64 blob (key material?)"),
)
"""What key material looks like in text; 340 base64 characters carry 255 bytes."""
KEY_PATHS = re.compile(r"munge\.key|/etc/munge/|\.pem$|id_(rsa|ed25519|ecdsa)$")


def _decode(text: str) -> str:
    """Base64 user data decoded; text that is not base64 stays as it is."""
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return text


def user_data(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """The node's cloud-init user data, as the VM receives it (None: not a node resource)."""
    if resource_type == AWS_LAUNCH_TEMPLATE:
        raw = props.get("userData")
    elif resource_type == AWS_INSTANCE:
        raw = props.get("userData") or props.get("userDataBase64")
    elif resource_type == GCP_INSTANCE:
        meta = _map(props.get("metadata"))
        raw = (
            meta.get("user-data")
            or meta.get("startup-script")
            or props.get("metadataStartupScript")
        )
    elif resource_type in (AZURE_VM, AZURE_VMSS):
        profile = props if resource_type == AZURE_VM else _map(props.get("virtualMachineProfile"))
        raw = _map(profile.get("osProfile")).get("customData") or profile.get("userData")
    else:
        return None
    return _decode(raw) if isinstance(raw, str) else ""


@lru_cache(maxsize=64)
def _write_files(text: str) -> tuple[tuple[str, str], ...]:
    """``(path, content)`` of a cloud-config's write_files. Cached: every GPU node of a stack
    carries the same user data, and a 2,048-GPU plan has hundreds of them."""
    if not text.startswith("#cloud-config"):
        return ()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(text, Loader=loader)  # a safe loader (C or pure Python)
    except yaml.YAMLError:
        return ()
    entries = (_map(e) for e in _items(_map(doc).get("write_files")))
    return tuple((str(e.get("path", "")), str(e.get("content") or "")) for e in entries)


def bootstrap_env(text: str) -> dict[str, str]:
    """podplan's bootstrap facts (``KEY=value`` lines) from the user data, or {}."""
    return dict(_bootstrap_env(text))


@lru_cache(maxsize=64)
def _bootstrap_env(text: str) -> tuple[tuple[str, str], ...]:
    for path, content in _write_files(text):
        if path == BOOTSTRAP_ENV:
            pairs = (
                line.partition("=")
                for line in content.splitlines()
                if "=" in line and not line.startswith("#")
            )
            return tuple((k.strip(), " ".join(shlex.split(v))) for k, _, v in pairs)
    return ()


def _node_type(resource_type: str, props: Mapping[str, Any]) -> str:
    if resource_type in (AWS_LAUNCH_TEMPLATE, AWS_INSTANCE):
        return str(props.get("instanceType", ""))
    if resource_type == GCP_INSTANCE:
        return str(props.get("machineType", "")).rsplit("/", 1)[-1]
    if resource_type == AZURE_VM:
        return str(_map(props.get("hardwareProfile")).get("vmSize", ""))
    if resource_type == AZURE_VMSS:
        return str(_map(props.get("sku")).get("name", ""))
    return ""


def expected_fabric(resource_type: str, props: Mapping[str, Any]) -> tuple[str, int] | None:
    """``(kind, devices)`` the node's GPU fabric must have, or None for a non-fabric node."""
    node = _node_type(resource_type, props)
    if node in EFA_PER_INSTANCE:
        return "efa", EFA_PER_INSTANCE[node]
    if node in TCPXO_MACHINES:
        return "tcpxo", GPU_NICS_PER_MACHINE[node]
    if INFINIBAND_SIZE.match(node):
        return "infiniband", IB_HCAS
    return None


def gpu_fabric_complete(args: ResourceArgs, report_violation: Report) -> None:
    """A GPU node's boot sets up its fabric and checks every device: all 32 EFA on p5,
    GPUDirect-TCPXO over the 8 GPU NICs (gVNIC) on A3 Mega, the 8 HCAs of InfiniBand on ND
    H100 v5. Without it NCCL falls back to plain TCP and the plan's bandwidth never shows."""
    typ, props = args.resource_type, args.props
    want = expected_fabric(typ, props)
    text = user_data(typ, props)
    if want is None or text is None:
        return
    kind, devices = want
    node = _node_type(typ, props)
    env = bootstrap_env(text)
    if env.get("FABRIC_KIND") != kind:
        found = env.get("FABRIC_KIND") or "no fabric setup"
        report_violation(f"{node} needs {kind} set up and checked at boot; found {found}", None)
    elif env.get("FABRIC_DEVICES") != str(devices):
        report_violation(
            f"{node}'s boot-time check must expect {devices} {kind} devices "
            f"(expects {env.get('FABRIC_DEVICES') or 'none'})",
            None,
        )
    if kind == "tcpxo":
        nics = [_map(n) for n in _items(props.get("networkInterfaces"))]
        not_gvnic = [i for i, n in enumerate(nics) if n.get("nicType") != "GVNIC"]
        if not_gvnic:
            report_violation(f"GPUDirect-TCPXO needs gVNIC on every NIC (not on {not_gvnic})", None)


@lru_cache(maxsize=64)
def _secret_findings(text: str) -> tuple[str, ...]:
    found = [what for pattern, what in SECRET_MARKERS if pattern.search(text)]
    for path, content in _write_files(text):
        if KEY_PATHS.search(path) and content:
            found.append(f"key material written to {path}")
    env = bootstrap_env(text)
    if env and env.get("PODPLAN_ROLE") and not env.get("PODPLAN_MUNGE_SECRET"):
        found.append("no secret store named for the munge key (PODPLAN_MUNGE_SECRET)")
    return tuple(found)


def secrets_not_in_user_data(args: ResourceArgs, report_violation: Report) -> None:
    """No key material in user data or instance metadata (anyone who may describe the instance
    can read them, and cloud-init logs them): keys come from the cloud's secret store."""
    typ, props = args.resource_type, args.props
    text = user_data(typ, props)
    if text is None:
        return
    found = list(_secret_findings(text))
    if typ == GCP_INSTANCE:
        for key, value in _map(props.get("metadata")).items():
            if key not in ("user-data", "ssh-keys") and isinstance(value, str):
                found += [f"metadata {key}: {f}" for f in _secret_findings(value)]
    if found:
        report_violation(f"secret in user data: {'; '.join(sorted(set(found)))}", None)

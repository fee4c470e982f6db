"""Run a real podplan Pulumi program under mocks and record every resource it declares.

No Pulumi CLI, no cloud account: ``pulumi.runtime.set_mocks`` replaces the engine, a
recording :class:`RecordingMocks` keeps each ``(type, name, inputs)``, and the tests assert on
that list. Each run resets the runtime, loads the stack config exactly as the CLI would hand
it to the program (strings; lists as JSON), and executes ``__main__.py`` with ``runpy`` in a
fresh module namespace (the stack's own packages are dropped from ``sys.modules`` first).
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import runpy
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings
from pulumi.runtime.mocks import MockMonitor

REPO = Path(__file__).resolve().parents[2]
STACKS = REPO / "stacks"
COMMON = STACKS / "common"
SIG_KEY = "4dabf18193072939515e22adb298388d"
"""How the Pulumi wire format marks a secret value."""

SECRET_TEST_VALUES = {"sshPublicKey": "ssh-ed25519 AAAAC3NzaTESTKEY podplan-test"}

# Computed outputs the mocks hand back, so that apply() chains in the programs resolve.
_FAKE_OUTPUTS: dict[str, dict[str, Any]] = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": {
        "dnsName": "fs-0123.fsx.us-east-1.amazonaws.com",
        "mountName": "abcdefgh",
    },
    "aws:ec2/instance:Instance": {"publicIp": "198.51.100.7"},
    "aws:ec2/launchTemplate:LaunchTemplate": {"latestVersion": 1},
    "gcp:lustre/instance:Instance": {"mountPoint": "172.20.0.2@tcp:/podplan"},
    "azure-native:network:PublicIPAddress": {"ipAddress": "198.51.100.9"},
    "azure-native:storagecache:AmlFilesystem": {
        "clientInfo": {"mgsAddress": "10.66.16.4", "mountCommand": "mount ..."}
    },
    "aws:secretsmanager/secret:Secret": {
        "arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:podplan-munge-AbCdEf"
    },
    "aws:iam/instanceProfile:InstanceProfile": {
        "arn": "arn:aws:iam::123456789012:instance-profile/podplan-node"
    },
    "gcp:serviceaccount/account:Account": {"email": "nodes@test.iam.gserviceaccount.com"},
    "random:index/randomString:RandomString": {"result": "x7k2qa"},
    "azure-native:managedidentity:UserAssignedIdentity": {
        "clientId": "00000000-0000-0000-0000-0000000000c1",
        "principalId": "00000000-0000-0000-0000-0000000000p1",
    },
}
_FAKE_CALLS: dict[str, dict[str, Any]] = {
    "azure-native:authorization:getClientConfig": {
        "clientId": "00000000-0000-0000-0000-000000000001",
        "objectId": "00000000-0000-0000-0000-000000000002",
        "subscriptionId": "00000000-0000-0000-0000-000000000003",
        "tenantId": "00000000-0000-0000-0000-000000000004",
    },
}


@dataclass(frozen=True)
class Resource:
    """One resource the program declared."""

    typ: str
    name: str
    inputs: Mapping[str, Any]
    custom: bool
    parent: str = ""
    """URN of the parent resource ("" for none)."""


@dataclass
class RecordingMocks(pulumi.runtime.Mocks):
    """Mocks that remember every resource and answer with its inputs plus fake outputs."""

    resources: list[Resource] = field(default_factory=list)
    parent: str = ""
    """Parent URN of the registration under way (set by :class:`RecordingMonitor`)."""

    def new_resource(
        self, args: pulumi.runtime.MockResourceArgs
    ) -> tuple[str | None, dict[str, Any]]:
        self.resources.append(
            Resource(args.typ, args.name, dict(args.inputs), bool(args.custom), self.parent)
        )
        outputs = {**dict(args.inputs), **_FAKE_OUTPUTS.get(args.typ, {})}
        if args.typ == "random:index/randomBytes:RandomBytes":
            # Real random bytes, as the provider makes them: the lab boots nodes with this key.
            raw = os.urandom(int(args.inputs["length"]))
            outputs |= {"base64": base64.b64encode(raw).decode(), "hex": raw.hex()}
        outputs.setdefault("name", args.name)
        if args.typ.startswith("gcp:"):
            outputs.setdefault("selfLink", f"projects/test/{args.typ.split(':')[1]}/{args.name}")
        if args.typ == "aws:ec2/keyPair:KeyPair":
            outputs.setdefault("keyName", args.name)
        if args.typ == "gcp:compute/instance:Instance":
            outputs["networkInterfaces"] = [
                {
                    **nic,
                    "accessConfigs": [
                        {**ac, "natIp": "198.51.100.8"} for ac in nic["accessConfigs"]
                    ],
                }
                if nic.get("accessConfigs")
                else nic
                for nic in outputs.get("networkInterfaces", [])
            ]
        if args.typ.startswith("azure-native:compute:VirtualMachine") and "identity" in outputs:
            # The API answers user-assigned identities as a map keyed by id, not the list sent.
            ids = outputs["identity"].get("userAssignedIdentities") or []
            outputs["identity"] = {
                **outputs["identity"],
                "userAssignedIdentities": {key: {} for key in ids},
            }
        if args.typ == "aws:ec2/instance:Instance" and "privateIp" not in outputs:
            outputs["privateIp"] = f"10.0.16.{len(self.resources) % 250 + 1}"
        return f"{args.name}-id", outputs

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return dict(_FAKE_CALLS.get(args.token, {})), []


class RecordingMonitor(MockMonitor):
    """The mock engine, telling the mocks each resource's parent."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks

    def RegisterResource(self, request: Any) -> Any:
        self.recording.parent = request.parent
        return super().RegisterResource(request)  # type: ignore[no-untyped-call]


@dataclass
class StackRun:
    """What one program run declared, and its stack outputs."""

    resources: list[Resource]
    outputs: dict[str, Any]

    def of(self, typ: str) -> list[Resource]:
        """Resources of one type token, in declaration order."""
        return [r for r in self.resources if r.typ == typ]

    def one(self, typ: str) -> Resource:
        found = self.of(typ)
        assert len(found) == 1, f"expected one {typ}, found {len(found)}"
        return found[0]

    def custom(self) -> Iterator[Resource]:
        return (r for r in self.resources if r.custom)


def import_from_stacks(folder: str, module: str) -> ModuleType:
    """Import ``module`` from ``stacks/<folder>`` (and the shared ``stacks/common``)."""
    for path in (STACKS / folder, COMMON):
        if str(path) not in sys.path:
            sys.path.append(str(path))
    return importlib.import_module(module)


def unsecret(value: Any) -> Any:
    """Strip Pulumi secret wrappers from a recorded input, recursively."""
    if isinstance(value, dict):
        if SIG_KEY in value:
            return unsecret(value.get("value"))
        return {k: unsecret(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unsecret(v) for v in value]
    return value


def load_stack_config(path: Path) -> dict[str, Any]:
    """The ``config:`` mapping of a ``Pulumi.<stack>.yaml`` file."""
    data = yaml.safe_load(path.read_text())
    config = data.get("config", {})
    assert isinstance(config, dict)
    return config


def as_engine_config(config: Mapping[str, Any]) -> dict[str, str]:
    """Config as the engine hands it to programs: strings, with lists/maps as JSON."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, list | dict):
            out[key] = json.dumps(value)
        else:
            out[key] = str(value)
    return out


@contextmanager
def stack_runtime(
    cloud: str, config: Mapping[str, Any], secrets: Mapping[str, str] | None = None
) -> Iterator[RecordingMocks]:
    """A fresh mocked Pulumi runtime for ``stacks/<cloud>`` with ``config`` loaded.

    ``config`` uses the stack-file keys (``podplan-aws:nodeCount``, ``aws:region`` ...);
    ``secrets`` are un-namespaced project keys added as secret config (default: test SSH key).
    The stack's packages are dropped from ``sys.modules`` first, so nothing carries over from
    an earlier run or another cloud.
    """
    project = f"podplan-{cloud}"
    values = as_engine_config(config)
    secret_values = SECRET_TEST_VALUES if secrets is None else secrets
    values.update({f"{project}:{k}": v for k, v in secret_values.items()})

    fresh = (f"podplan_{cloud}", "podplan_stackkit")
    for mod in [m for m in sys.modules if m.split(".")[0] in fresh]:
        del sys.modules[mod]
    added = [p for p in (str(STACKS / cloud), str(COMMON)) if p not in sys.path]
    sys.path[:0] = added

    mocks = RecordingMocks()
    settings.reset_options(project=project, stack="test", preview=False)
    pulumi.runtime.set_mocks(
        mocks, project=project, stack="test", preview=False, monitor=RecordingMonitor(mocks)
    )
    pulumi.runtime.set_all_config(values, [f"{project}:{k}" for k in secret_values])
    try:
        yield mocks
    finally:
        for p in added:
            sys.path.remove(p)


def run_program(
    cloud: str, config: Mapping[str, Any], secrets: Mapping[str, str] | None = None
) -> StackRun:
    """Run ``stacks/<cloud>/__main__.py`` under recording mocks with ``config``."""
    outputs: dict[str, Any] = {}
    with stack_runtime(cloud, config, secrets) as mocks:

        @pulumi.runtime.test  # type: ignore[untyped-decorator]
        def program() -> pulumi.Output[None]:
            runpy.run_path(str(STACKS / cloud / "__main__.py"), run_name="__main__")
            stack = settings.get_root_resource()
            exported = dict(getattr(stack, "outputs", {}))
            return pulumi.Output.from_input(exported).apply(outputs.update)

        program()
    return StackRun(mocks.resources, unsecret(outputs))


@dataclass
class ConfigRead:
    """The result of a stack's ``config.load()``: settings and the keys it read."""

    settings: Any
    project_keys: dict[str, Any]
    """``{key: KeyRead}`` of the project namespace."""


def read_config(
    cloud: str, config: Mapping[str, Any], secrets: Mapping[str, str] | None = None
) -> ConfigRead:
    """Call ``podplan_<cloud>.config.load`` the way the program does; raises its ConfigError."""
    result: list[ConfigRead] = []
    with stack_runtime(cloud, config, secrets):
        module = importlib.import_module(f"podplan_{cloud}.config")
        kit = importlib.import_module("podplan_stackkit.config")

        @pulumi.runtime.test  # type: ignore[untyped-decorator]
        def load() -> None:
            reader = kit.ConfigReader(module.PROJECT)
            result.append(ConfigRead(module.load(reader), dict(reader.reads)))

        load()
    return result[0]

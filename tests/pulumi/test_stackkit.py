"""The shared stack kit: Slurm/cloud-init bootstrap text and validated config reads."""

from __future__ import annotations

import ipaddress
import shlex

import pytest
import yaml

from tests.pulumi.harness import import_from_stacks

bootstrap = import_from_stacks("common", "podplan_stackkit.bootstrap")
slurm = import_from_stacks("common", "podplan_stackkit.slurm")
kit = import_from_stacks("common", "podplan_stackkit.config")

FABRIC = bootstrap.Fabric(
    kind="efa",
    devices=32,
    state="ACTIVE",
    setup="#!/bin/bash\nmodprobe efa\n",
    devices_script="#!/bin/bash\nls /sys/class/infiniband\n",
    env="FI_PROVIDER=efa\n",
    requires=("/opt/amazon/efa/lib",),
)
BOOT = bootstrap.ClusterBoot(
    cluster_name="demo",
    spec_file="examples/demo.yaml",
    head_hostname="demo-head",
    head_address="10.64.0.10",
    gpus_per_node=8,
    max_nodes=4,
    node_feature="p5.48xlarge",
    seams=bootstrap.CloudSeams(
        node_name="#!/bin/bash\ncat /name\n",
        munge_key="#!/bin/bash\naws secretsmanager get-secret-value\n",
        lustre_client_setup=("apt-get install -y lustre-client",),
        renames_host=True,
    ),
    fabric=FABRIC,
    env={"PODPLAN_MUNGE_SECRET": "arn:aws:secretsmanager:us-east-1:1:secret:demo"},
)
MOUNT = bootstrap.SharedMount("fs.example@tcp:/abc", "/shared")
SEAMS = "/usr/local/lib/podplan/seams"


def files(text: str) -> dict[str, dict[str, str]]:
    return {f["path"]: f for f in yaml.safe_load(text)["write_files"]}


def env_of(text: str) -> dict[str, str]:
    content = files(text)["/etc/podplan/bootstrap.env"]["content"]
    pairs = (line.partition("=") for line in content.splitlines() if "=" in line)
    return {k: " ".join(shlex.split(v)) for k, _, v in pairs}


def test_slurm_conf_is_configless_with_dynamic_gpu_nodes() -> None:
    conf = slurm.slurm_conf(BOOT, "/usr/local/lib/podplan/task-prolog")
    for line in (
        "ClusterName=demo",
        "SlurmctldHost=demo-head(10.64.0.10)",
        "SlurmctldParameters=enable_configless",
        "SelectType=select/cons_tres",
        "GresTypes=gpu",
        "MaxNodeCount=4",
        "TaskProlog=/usr/local/lib/podplan/task-prolog",
        "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    ):
        assert line in conf.splitlines()
    assert slurm.gres_conf(8) == "Name=gpu File=/dev/nvidia[0-7]\n"


def test_head_user_data_runs_the_bootstrap_with_the_cloud_seams() -> None:
    text = bootstrap.head_user_data(BOOT, MOUNT)
    doc = yaml.safe_load(text)
    assert doc["hostname"] == "demo-head"
    assert doc["runcmd"] == [["/usr/local/sbin/podplan-bootstrap"]]
    assert doc["packages"] == ["munge", "slurmctld", "slurm-client"]
    f = files(text)
    assert f["/usr/sbin/policy-rc.d"]["content"].endswith("exit 101\n")
    assert f["/usr/local/sbin/podplan-bootstrap"]["permissions"] == "0700"
    assert f["/usr/local/sbin/podplan-bootstrap"]["content"].startswith("#!/bin/bash")
    assert "set -euo pipefail" in f["/usr/local/sbin/podplan-bootstrap"]["content"]
    mount = f[f"{SEAMS}/shared-fs"]["content"]
    assert "fs.example@tcp:/abc /shared lustre noatime,flock,_netdev 0 0" in mount
    assert "apt-get install -y lustre-client" in mount
    assert f[f"{SEAMS}/munge-key"]["content"] == BOOT.seams.munge_key
    assert f"{SEAMS}/fabric-devices" not in f  # the head has no GPU fabric
    for unit in ("munge", "slurmctld"):
        dropin = f[f"/etc/systemd/system/{unit}.service.d/podplan.conf"]["content"]
        assert "ExecStartPre=+/usr/local/lib/podplan/check-munge-key" in dropin
    env = env_of(text)
    assert env["PODPLAN_ROLE"] == "head" and env["PODPLAN_HEAD_ADDRESS"] == "10.64.0.10"
    assert env["PODPLAN_MUNGE_SECRET"] == BOOT.env["PODPLAN_MUNGE_SECRET"]


def test_compute_user_data_is_the_same_for_every_node() -> None:
    text = bootstrap.compute_user_data(BOOT, MOUNT)
    doc = yaml.safe_load(text)
    assert "hostname" not in doc and doc["preserve_hostname"] is True
    f = files(text)
    assert f["/etc/default/slurmd"]["content"] == (
        "SLURMD_OPTIONS=\"-Z --conf-server 10.64.0.10:6817 --conf 'Gres=gpu:8 "
        "Feature=p5.48xlarge'\"\n"
    )
    slurmd = f["/etc/systemd/system/slurmd.service.d/podplan.conf"]["content"]
    assert "ConditionPathExists=\n" in slurmd  # configless: no local slurm.conf
    assert "Requires=munge.service podplan-fabric-check.service" in slurmd
    assert "ExecStartPre=+/usr/local/lib/podplan/check-munge-key" in slurmd
    unit = f["/etc/systemd/system/podplan-fabric-check.service"]["content"]
    assert "Before=slurmd.service" in unit and "WantedBy=multi-user.target" in unit
    assert f[f"{SEAMS}/fabric-setup"]["content"] == FABRIC.setup
    assert f["/etc/podplan/fabric.env"]["content"] == FABRIC.env
    env = env_of(text)
    assert (env["FABRIC_KIND"], env["FABRIC_DEVICES"], env["FABRIC_STATE"]) == (
        "efa",
        "32",
        "ACTIVE",
    )
    assert env["FABRIC_REQUIRES"] == "/opt/amazon/efa/lib"
    named = bootstrap.ClusterBoot(
        **{**BOOT.__dict__, "seams": bootstrap.CloudSeams(node_name="x", munge_key="y")}
    )
    assert yaml.safe_load(bootstrap.compute_user_data(named, MOUNT))["preserve_hostname"] is False


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        (2400, {"step": 2400, "minimum": 2400, "maximum": None, "also": (1200,)}, None),
        (1200, {"step": 2400, "minimum": 2400, "maximum": None, "also": (1200,)}, None),
        (3000, {"step": 2400, "minimum": 2400, "maximum": None, "also": (1200,)}, "2400 or 4800"),
        (500, {"step": 2400, "minimum": 2400, "maximum": None, "also": (1200,)}, "1200)"),
        (10000, {"step": 9000, "minimum": 9000, "maximum": 1_530_000}, "9000 or 18000"),
        (200, {"step": 8, "minimum": 8, "maximum": 128}, "nearest valid: 128"),
    ],
)
def test_step_problem_names_the_nearest_valid_sizes(
    value: int, kwargs: dict[str, object], expected: str | None
) -> None:
    problem = kit.step_problem(value, unit="GiB", where="x", **kwargs)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_admin_cidr_must_not_be_the_internet() -> None:
    assert kit.admin_cidr_problem(ipaddress.IPv4Network("0.0.0.0/0"))
    assert kit.admin_cidr_problem(ipaddress.IPv4Network("203.0.113.0/24")) is None

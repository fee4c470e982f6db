"""The shared stack kit: Slurm/cloud-init bootstrap text and validated config reads."""

from __future__ import annotations

import ipaddress

import pytest
import yaml

from tests.pulumi.harness import import_from_stacks

bootstrap = import_from_stacks("common", "podplan_stackkit.bootstrap")
kit = import_from_stacks("common", "podplan_stackkit.config")

BOOT = bootstrap.ClusterBoot(
    cluster_name="demo",
    spec_file="examples/demo.yaml",
    head_hostname="demo-head",
    head_address="10.64.0.10",
    gpus_per_node=8,
    max_nodes=4,
    node_feature="p5.48xlarge",
    lustre_client_setup=("apt-get install -y lustre-client",),
)
MOUNT = bootstrap.SharedMount("fs.example@tcp:/abc", "/shared")


def test_slurm_conf_is_configless_with_dynamic_gpu_nodes() -> None:
    conf = bootstrap.slurm_conf(BOOT)
    for line in (
        "ClusterName=demo",
        "SlurmctldHost=demo-head(10.64.0.10)",
        "SlurmctldParameters=enable_configless",
        "SelectType=select/cons_tres",
        "GresTypes=gpu",
        "MaxNodeCount=4",
        "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    ):
        assert line in conf.splitlines()
    assert bootstrap.gres_conf(BOOT) == "Name=gpu File=/dev/nvidia[0-7]\n"


def test_head_user_data_mounts_then_shares_the_munge_key() -> None:
    doc = yaml.safe_load(bootstrap.head_user_data(BOOT, MOUNT))
    assert doc["hostname"] == "demo-head"
    files = {f["path"]: f for f in doc["write_files"]}
    mount = files["/usr/local/sbin/podplan-mount-shared"]
    assert mount["permissions"] == "0755"
    assert "fs.example@tcp:/abc /shared lustre noatime,flock,_netdev 0 0" in mount["content"]
    assert "apt-get install -y lustre-client" in mount["content"]
    run = doc["runcmd"]
    assert run[0] == "/usr/local/sbin/podplan-mount-shared"
    assert any("/dev/urandom of=/shared/.podplan/munge.key" in c for c in run)
    assert run[-1] == "systemctl enable --now slurmctld"


def test_compute_user_data_is_the_same_for_every_node() -> None:
    text = bootstrap.compute_user_data(BOOT, MOUNT)
    doc = yaml.safe_load(text)
    assert "hostname" not in doc and doc["preserve_hostname"] is False
    options = {f["path"]: f["content"] for f in doc["write_files"]}["/etc/default/slurmd"]
    assert options == (
        "SLURMD_OPTIONS=\"-Z --conf-server 10.64.0.10:6817 --conf 'Gres=gpu:8 "
        "Feature=p5.48xlarge'\"\n"
    )
    named = bootstrap.ClusterBoot(**{**BOOT.__dict__, "hostname_command": "cat /name"})
    doc = yaml.safe_load(bootstrap.compute_user_data(named, MOUNT))
    assert doc["runcmd"][0] == 'hostnamectl set-hostname "$(cat /name)"'
    assert doc["preserve_hostname"] is True


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

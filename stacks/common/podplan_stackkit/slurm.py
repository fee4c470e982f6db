"""Slurm configuration files for the head node (GPU nodes fetch them: configless mode)."""

from __future__ import annotations

from typing import Protocol

SLURMCTLD_PORT = 6817


class SlurmCluster(Protocol):
    """What slurm.conf needs to know about the cluster."""

    @property
    def cluster_name(self) -> str: ...
    @property
    def spec_file(self) -> str: ...
    @property
    def head_hostname(self) -> str: ...
    @property
    def head_address(self) -> str: ...
    @property
    def max_nodes(self) -> int: ...


def slurm_conf(boot: SlurmCluster, task_prolog: str) -> str:
    """slurm.conf: configless controller, dynamic GPU nodes, cgroup confinement.

    ``task_prolog`` hands every job task the fabric's NCCL environment on the GPU nodes.
    """
    settings: list[tuple[str, str]] = [
        ("ClusterName", boot.cluster_name),
        ("SlurmctldHost", f"{boot.head_hostname}({boot.head_address})"),
        ("SlurmctldPort", str(SLURMCTLD_PORT)),
        ("SlurmctldParameters", "enable_configless"),
        ("AuthType", "auth/munge"),
        ("SelectType", "select/cons_tres"),
        ("SelectTypeParameters", "CR_Core_Memory"),
        ("GresTypes", "gpu"),
        ("ProctrackType", "proctrack/cgroup"),
        ("TaskPlugin", "task/cgroup,task/affinity"),
        ("TaskProlog", task_prolog),
        ("MaxNodeCount", str(boot.max_nodes)),
        ("TreeWidth", "65533"),
        ("ReturnToService", "2"),
        ("StateSaveLocation", "/var/spool/slurmctld"),
        ("SlurmdSpoolDir", "/var/spool/slurmd"),
        ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
        ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
    ]
    lines = [f"# Slurm for {boot.cluster_name} (podplan spec {boot.spec_file})"]
    lines += [f"{k}={v}" for k, v in settings]
    lines.append("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def gres_conf(gpus_per_node: int) -> str:
    """gres.conf: the node's GPUs as static device files."""
    last = gpus_per_node - 1
    devices = "/dev/nvidia0" if last == 0 else f"/dev/nvidia[0-{last}]"
    return f"Name=gpu File={devices}\n"


def cgroup_conf() -> str:
    """cgroup.conf: confine jobs to their cores, memory and GPUs."""
    return "ConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainDevices=yes\n"

"""cloud-init user data that turns plain GPU VMs into a Slurm cluster, on any of the clouds.

The head node runs ``slurmctld`` in configless mode; compute nodes run ``slurmd -Z`` (dynamic
nodes) pointed at the head's fixed private address, so no node list has to be known when the
head boots and scale sets with generated host names work too. The munge key is generated on
the head at first boot and handed to the compute nodes through the shared Lustre file system
(root-only directory), so **no secret is ever part of the user data**, the stack config or the
Pulumi state.

Everything here is pure: data in, text out. The cloud-specific parts (how to install the
Lustre client, the mount device) are passed in by each stack.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import yaml

SLURMCTLD_PORT = 6817
MUNGE_DROP = ".podplan/munge.key"


@dataclass(frozen=True)
class SharedMount:
    """How a node mounts the shared Lustre file system."""

    device: str = ""
    """Lustre device, ``<MGS NID>@tcp:/<fsname>``."""
    mount_point: str = "/shared"
    options: str = "noatime,flock,_netdev"


@dataclass(frozen=True)
class ClusterBoot:
    """What every node needs to know to take its part in the Slurm cluster."""

    cluster_name: str
    spec_file: str
    head_hostname: str
    head_address: str
    gpus_per_node: int
    max_nodes: int
    node_feature: str
    """Instance type; becomes a Slurm node feature (``--constraint``)."""
    lustre_client_setup: tuple[str, ...] = ()
    """Shell lines that install the Lustre client; run only when the module is missing."""
    hostname_command: str | None = None
    """Shell command printing a compute node's name, where the cloud does not make it the
    host name itself (AWS: the instance's Name tag from instance metadata)."""


def slurm_conf(boot: ClusterBoot) -> str:
    """slurm.conf for the head (compute nodes fetch it: configless mode)."""
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


def gres_conf(boot: ClusterBoot) -> str:
    """gres.conf: the node's GPUs as static device files."""
    last = boot.gpus_per_node - 1
    devices = "/dev/nvidia0" if last == 0 else f"/dev/nvidia[0-{last}]"
    return f"Name=gpu File={devices}\n"


def cgroup_conf() -> str:
    """cgroup.conf: confine jobs to their cores, memory and GPUs."""
    return "ConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainDevices=yes\n"


def mount_script(boot: ClusterBoot, mount: SharedMount) -> str:
    """Install the Lustre client if needed, mount the shared file system, persist in fstab."""
    setup = "\n".join(f"  {line}" for line in boot.lustre_client_setup) or "  true"
    mp = shlex.quote(mount.mount_point)
    fstab = f"{mount.device} {mount.mount_point} lustre {mount.options} 0 0"
    return f"""#!/bin/bash
# Mount the shared Lustre file system of {boot.cluster_name} at {mount.mount_point}.
set -euo pipefail
if ! modprobe -q lustre; then
{setup}
  modprobe lustre
fi
mkdir -p {mp}
grep -qs ' {mount.mount_point} lustre ' /etc/fstab || echo {shlex.quote(fstab)} >> /etc/fstab
for attempt in $(seq 1 30); do
  mountpoint -q {mp} && exit 0
  mount {mp} && exit 0
  sleep 20
done
echo "podplan: could not mount {mount.device} on {mount.mount_point}" >&2
exit 1
"""


def _cloud_config(doc: dict[str, Any]) -> str:
    class _Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    _Dumper.add_representer(str, _str)
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    return "#cloud-config\n" + body


def _file(path: str, content: str, mode: str = "0644") -> dict[str, str]:
    return {"path": path, "permissions": mode, "owner": "root:root", "content": content}


def head_user_data(boot: ClusterBoot, mount: SharedMount) -> str:
    """cloud-config for the head/login node: slurmctld, munge key on the shared file system."""
    drop = f"{mount.mount_point}/{MUNGE_DROP}"
    drop_dir = drop.rsplit("/", 1)[0]
    return _cloud_config(
        {
            "hostname": boot.head_hostname,
            "preserve_hostname": False,
            "package_update": True,
            "packages": ["munge", "slurmctld", "slurm-client"],
            "write_files": [
                _file("/etc/slurm/slurm.conf", slurm_conf(boot)),
                _file("/etc/slurm/gres.conf", gres_conf(boot)),
                _file("/etc/slurm/cgroup.conf", cgroup_conf()),
                _file("/usr/local/sbin/podplan-mount-shared", mount_script(boot, mount), "0755"),
            ],
            "runcmd": [
                "/usr/local/sbin/podplan-mount-shared",
                f"install -d -m 0700 -o root -g root {drop_dir}",
                f"test -s {drop} || (umask 077; dd if=/dev/urandom of={drop} bs=1 count=1024)",
                f"install -m 0400 -o munge -g munge {drop} /etc/munge/munge.key",
                "install -d -m 0755 -o slurm -g slurm /var/spool/slurmctld /var/log/slurm",
                "systemctl restart munge",
                "systemctl enable --now slurmctld",
            ],
        }
    )


def compute_user_data(boot: ClusterBoot, mount: SharedMount) -> str:
    """cloud-config for every GPU node (one text for all): mount, take the munge key, register
    with slurmctld as a dynamic node named after the host."""
    drop = f"{mount.mount_point}/{MUNGE_DROP}"
    conf = f"Gres=gpu:{boot.gpus_per_node} Feature={boot.node_feature}"
    options = f"-Z --conf-server {boot.head_address}:{SLURMCTLD_PORT} --conf '{conf}'"
    name_host = (
        [f'hostnamectl set-hostname "$({boot.hostname_command})"'] if boot.hostname_command else []
    )
    return _cloud_config(
        {
            "preserve_hostname": bool(boot.hostname_command),
            "package_update": True,
            "packages": ["munge", "slurmd"],
            "write_files": [
                _file("/etc/default/slurmd", f'SLURMD_OPTIONS="{options}"\n'),
                # slurmd may come up before slurmctld answers: keep retrying.
                _file(
                    "/etc/systemd/system/slurmd.service.d/podplan.conf",
                    "[Service]\nRestart=on-failure\nRestartSec=15\n",
                ),
                _file("/usr/local/sbin/podplan-mount-shared", mount_script(boot, mount), "0755"),
            ],
            "runcmd": [
                *name_host,
                "/usr/local/sbin/podplan-mount-shared",
                f"for i in $(seq 1 180); do test -s {drop} && break; sleep 10; done",
                f"install -m 0400 -o munge -g munge {drop} /etc/munge/munge.key",
                "install -d -m 0755 -o slurm -g slurm /var/log/slurm",
                "systemctl daemon-reload",
                "systemctl restart munge",
                "systemctl enable --now slurmd",
            ],
        }
    )

"""cloud-init user data that turns plain GPU VMs into a Slurm cluster, on any of the clouds.

The head node runs ``slurmctld`` in configless mode; GPU nodes run ``slurmd -Z`` (dynamic
nodes) pointed at the head's fixed private address, so no node list has to be known when the
head boots and scale sets with generated host names work too.

Every node runs the same static bootstrap (``scripts/bootstrap.sh``) from cloud-init's
``runcmd``. What differs per cloud lives in **seams**, one small script each, written next to
it: the node's name, the munge key from the cloud's secret store, the Lustre mount, and on GPU
nodes the fabric's setup and device listing. The munge key is generated once by Pulumi and
kept in the cloud's secret manager; nodes fetch it at boot with their own identity, so **no
secret is ever part of the user data** (nor of the shared file system).

Everything here is pure: data in, text out.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

from podplan_stackkit.slurm import SLURMCTLD_PORT, cgroup_conf, gres_conf, slurm_conf

if TYPE_CHECKING:
    from podplan_stackkit.settings import ClusterSettings

SEAM_DIR = "/usr/local/lib/podplan/seams"
LIB_DIR = "/usr/local/lib/podplan"
BOOTSTRAP = "/usr/local/sbin/podplan-bootstrap"
ENV_FILE = "/etc/podplan/bootstrap.env"
FABRIC_ENV = "/etc/podplan/fabric.env"
TASK_PROLOG = f"{LIB_DIR}/task-prolog"
CHECK_KEY = f"{LIB_DIR}/check-munge-key"
FABRIC_CHECK_UNIT = "podplan-fabric-check.service"
HEAD_PACKAGES = ("munge", "slurmctld", "slurm-client")
COMPUTE_PACKAGES = ("munge", "slurmd", "slurm-client")
POLICY_RC = """#!/bin/sh
# podplan: hold service starts until the bootstrap has placed the munge key
exit 101
"""
"""Written before cloud-init installs the packages, so that their scripts start no daemon
with the package's own munge key; the bootstrap removes it."""


@dataclass(frozen=True)
class SharedMount:
    """How a node mounts the shared Lustre file system."""

    device: str = ""
    """Lustre device, ``<MGS NID>@tcp:/<fsname>``."""
    mount_point: str = "/shared"
    options: str = "noatime,flock,_netdev"


@dataclass(frozen=True)
class Fabric:
    """A GPU node's fabric: what the boot-time check expects and the cloud's scripts for it."""

    kind: str
    """``efa``, ``tcpxo`` or ``infiniband``: named in messages and checked by the policies."""
    devices: int
    """How many fabric devices every GPU node must have, all in ``state``."""
    state: str
    """The state a healthy device reports (``ACTIVE`` for RDMA ports, ``up`` for NICs)."""
    setup: str
    """Seam ``fabric-setup``: installs/starts the fabric's software at first boot."""
    devices_script: str
    """Seam ``fabric-devices``: prints ``<device> <state>`` per fabric device."""
    env: str
    """``/etc/podplan/fabric.env``: the NCCL/libfabric environment every job task gets."""
    requires: tuple[str, ...] = ()
    """Files the fabric's software must have put in place (plugins, topology file)."""
    units: dict[str, str] = field(default_factory=dict)
    """Extra systemd units (name -> text), e.g. a receive-datapath manager."""
    after: tuple[str, ...] = ()
    """Units the boot-time fabric check runs after."""


@dataclass(frozen=True)
class CloudSeams:
    """The cloud-specific scripts every node runs (see ``scripts/bootstrap.sh``)."""

    node_name: str
    munge_key: str
    lustre_client_setup: tuple[str, ...] = ()
    """Shell lines that install the Lustre client; run only when the module is missing."""
    renames_host: bool = False
    """The node-name seam renames the host (AWS: after its Name tag), so cloud-init must keep
    that name on later boots instead of resetting it from the instance metadata."""


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
    seams: CloudSeams
    fabric: Fabric | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Cloud facts the seams read from ``bootstrap.env`` (region, secret name, ...)."""


def script(name: str) -> str:
    """One of the static scripts shipped with this package (``scripts/<name>``)."""
    return (resources.files("podplan_stackkit") / "scripts" / name).read_text(encoding="utf-8")


def hostname_seam() -> str:
    """Seam ``node-name`` where the cloud already names the host (GCP, Azure)."""
    return (
        "#!/bin/bash\n# The cloud names the host after the VM: keep that name.\n"
        "set -euo pipefail\nhostname -s\n"
    )


@dataclass(frozen=True)
class StackSeams:
    """The seam scripts a cloud's stack package ships in ``<package>/seams/``."""

    package: str
    """The cloud's package, e.g. ``podplan_aws``."""

    def read(self, name: str) -> str:
        """Seam script ``seams/<name>`` of the package."""
        return (resources.files(self.package) / "seams" / name).read_text(encoding="utf-8")

    def fabric(
        self,
        *,
        kind: str,
        devices: int,
        state: str,
        requires: tuple[str, ...],
        units: dict[str, str] | None = None,
        after: tuple[str, ...] = (),
    ) -> Fabric:
        """The cloud's fabric, its scripts read from the seams every cloud names alike:
        ``fabric-setup.sh``, ``fabric-devices.sh`` and ``fabric.env``."""
        return Fabric(
            kind=kind,
            devices=devices,
            state=state,
            setup=self.read("fabric-setup.sh"),
            devices_script=self.read("fabric-devices.sh"),
            env=self.read("fabric.env"),
            requires=requires,
            units=dict(units or {}),
            after=after,
        )


def boot_from_settings(
    s: ClusterSettings,
    *,
    head_address: str,
    seams: CloudSeams,
    fabric: Fabric | None,
    env: dict[str, str],
) -> ClusterBoot:
    """The bootstrap facts of a stack: what every cloud takes from the shared settings the
    same way, plus the cloud's own head address, seams, fabric and the facts its seams read."""
    return ClusterBoot(
        cluster_name=s.cluster_name,
        spec_file=s.spec_file,
        head_hostname=s.head_hostname,
        head_address=head_address,
        gpus_per_node=s.gpus_per_node,
        max_nodes=s.node_count,
        node_feature=s.instance_type,
        seams=seams,
        fabric=fabric,
        env=env,
    )


def mount_script(boot: ClusterBoot, mount: SharedMount) -> str:
    """Seam ``shared-fs``: install the Lustre client if needed, mount, persist in fstab."""
    setup = "\n".join(f"  {line}" for line in boot.seams.lustre_client_setup) or "  true"
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


def _env_file(values: dict[str, str]) -> str:
    lines = [f"{k}={shlex.quote(v)}" for k, v in values.items()]
    return "# podplan bootstrap facts (no secrets: the munge key comes from the secret store)\n" + (
        "\n".join(lines) + "\n"
    )


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


def _guard_dropin(unit: str, extra: str = "") -> dict[str, str]:
    """Drop-in: the unit starts only with the munge key the bootstrap received."""
    body = f"[Service]\nExecStartPre=+{CHECK_KEY}\n{extra}"
    return _file(f"/etc/systemd/system/{unit}.service.d/podplan.conf", body)


def _common_files(boot: ClusterBoot, mount: SharedMount, role: str) -> list[dict[str, str]]:
    packages = HEAD_PACKAGES if role == "head" else COMPUTE_PACKAGES
    env = {
        "PODPLAN_ROLE": role,
        "PODPLAN_CLUSTER": boot.cluster_name,
        "PODPLAN_HEAD_ADDRESS": boot.head_address,
        "PODPLAN_MOUNT_POINT": mount.mount_point,
        "PODPLAN_PACKAGES": " ".join(packages),
        **boot.env,
    }
    if role == "compute" and boot.fabric:
        env |= {
            "FABRIC_KIND": boot.fabric.kind,
            "FABRIC_DEVICES": str(boot.fabric.devices),
            "FABRIC_STATE": boot.fabric.state,
            "FABRIC_REQUIRES": " ".join(boot.fabric.requires),
        }
    return [
        _file("/usr/sbin/policy-rc.d", POLICY_RC, "0755"),
        _file(ENV_FILE, _env_file(env)),
        _file(BOOTSTRAP, script("bootstrap.sh"), "0700"),
        _file(CHECK_KEY, script("check-munge-key.sh"), "0700"),
        _file(f"{SEAM_DIR}/node-name", boot.seams.node_name, "0700"),
        _file(f"{SEAM_DIR}/munge-key", boot.seams.munge_key, "0700"),
        _file(f"{SEAM_DIR}/shared-fs", mount_script(boot, mount), "0700"),
        _guard_dropin("munge"),
    ]


def head_user_data(boot: ClusterBoot, mount: SharedMount) -> str:
    """cloud-config for the head/login node: slurmctld in configless mode."""
    return _cloud_config(
        {
            "hostname": boot.head_hostname,
            "preserve_hostname": False,
            "package_update": True,
            "packages": list(HEAD_PACKAGES),
            "write_files": [
                *_common_files(boot, mount, "head"),
                _file("/etc/slurm/slurm.conf", slurm_conf(boot, TASK_PROLOG)),
                _file("/etc/slurm/gres.conf", gres_conf(boot.gpus_per_node)),
                _file("/etc/slurm/cgroup.conf", cgroup_conf()),
                _guard_dropin("slurmctld", "[Unit]\nRequires=munge.service\n"),
            ],
            "runcmd": [[BOOTSTRAP]],
        }
    )


def _fabric_files(fabric: Fabric) -> list[dict[str, str]]:
    after = " ".join(("network-online.target", *fabric.after))
    check_unit = "\n".join(
        [
            "[Unit]",
            f"Description=podplan: {fabric.devices} {fabric.kind} fabric devices {fabric.state}"
            " before slurmd starts",
            f"Wants={after}",
            f"After={after}",
            "Before=slurmd.service",
            "",
            "[Service]",
            "Type=oneshot",
            "RemainAfterExit=yes",
            f"ExecStart={LIB_DIR}/fabric-check",
            "",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )
    return [
        _file(f"{SEAM_DIR}/fabric-setup", fabric.setup, "0700"),
        _file(f"{SEAM_DIR}/fabric-devices", fabric.devices_script, "0700"),
        _file(f"{LIB_DIR}/fabric-check", script("fabric-check.sh"), "0700"),
        _file(f"/etc/systemd/system/{FABRIC_CHECK_UNIT}", check_unit),
        _file(FABRIC_ENV, fabric.env),
        _file("/etc/profile.d/podplan-fabric.sh", _profile()),
        *(_file(f"/etc/systemd/system/{name}", text) for name, text in fabric.units.items()),
    ]


def _profile() -> str:
    return (
        "# podplan: the GPU fabric's NCCL/libfabric environment for login shells\n"
        f"if [ -r {FABRIC_ENV} ]; then set -a; . {FABRIC_ENV}; set +a; fi\n"
    )


def compute_user_data(boot: ClusterBoot, mount: SharedMount) -> str:
    """cloud-config for every GPU node (one text for all): fetch the key, mount, check the
    fabric, register with slurmctld as a dynamic node named after the host."""
    conf = f"Gres=gpu:{boot.gpus_per_node} Feature={boot.node_feature}"
    options = f"-Z --conf-server {boot.head_address}:{SLURMCTLD_PORT} --conf '{conf}'"
    requires = "munge.service" + (f" {FABRIC_CHECK_UNIT}" if boot.fabric else "")
    slurmd_unit = (
        # Configless: no local slurm.conf, so the package unit's condition on it must go.
        f"[Unit]\nConditionPathExists=\nRequires={requires}\nAfter={requires}\n"
        # slurmd may come up before slurmctld answers: keep retrying.
        "[Service]\nRestart=on-failure\nRestartSec=15\n"
    )
    return _cloud_config(
        {
            "preserve_hostname": boot.seams.renames_host,
            "package_update": True,
            "packages": list(COMPUTE_PACKAGES),
            "write_files": [
                *_common_files(boot, mount, "compute"),
                _file("/etc/default/slurmd", f'SLURMD_OPTIONS="{options}"\n'),
                _guard_dropin("slurmd", slurmd_unit),
                _file(TASK_PROLOG, script("task-prolog.sh"), "0755"),
                *(_fabric_files(boot.fabric) if boot.fabric else []),
            ],
            "runcmd": [[BOOTSTRAP]],
        }
    )

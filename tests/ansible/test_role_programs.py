"""The Python programs the roles ship: the node-shape pre-flight, the sacctmgr planner,
the fabric facts and the health check, on fixture sysfs trees and command outputs.

The same code runs against the real tools in the lab e2e (tests/e2e); here every branch a
lab cannot reach (IB ports down or slow, a node with more memory, an admin's drain reason)
is exercised.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROLES = Path(__file__).resolve().parents[2] / "ansible" / "roles"


def _load(path: Path, name: str) -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


shape = _load(ROLES / "node_preflight/library/podplan_node_shape.py", "podplan_node_shape")
sacct = _load(ROLES / "slurm_accounts/library/podplan_sacctmgr.py", "podplan_sacctmgr")
facts = _load(ROLES / "fabric/library/podplan_fabric_facts.py", "podplan_fabric_facts")
health = _load(ROLES / "slurm_health/files/podplan-health", "podplan_health")

SLURMD_C = (
    "NodeName=gpu001 CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 "
    "RealMemory=2063684\nUpTime=0-01:02:03\n"
)


def _port(root: Path, dev: str, state: str, rate: str) -> None:
    port = root / dev / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text(state + "\n")
    (port / "rate").write_text(rate + "\n")


# ----------------------------------------------------------------- pre-flight


def test_slurmd_c_parsing() -> None:
    assert shape.parse_slurmd_c(SLURMD_C) == {
        "sockets": 2,
        "cores_per_socket": 56,
        "threads_per_core": 2,
        "real_memory_mb": 2063684,
    }
    assert shape.parse_slurmd_c("NodeName=x Sockets=2 CoresPerSocket=48")["sockets"] == 2


def test_a_bigger_node_than_planned_is_reported() -> None:
    """The issue's case: 2x 8480+ (56 cores) and 2 TB against the catalog's 48 cores, 1 TB."""
    planned = shape.normalize(
        {
            "sockets": 2,
            "cores_per_socket": "48",
            "threads_per_core": 2,
            "real_memory_mb": 996147,
            "memory_mb": 1048576,
            "gpus": 8,
            "ib": [],
        }
    )
    found = {**shape.parse_slurmd_c(SLURMD_C), "gpus": 8, "ib": []}
    rows = shape.differences(planned, found, 0.1)
    assert [r["check"] for r in rows] == [
        "cores_per_socket",
        "memory_mb (more than planned: unused)",
    ]
    assert rows[0] == {"check": "cores_per_socket", "planned": "48", "found": "56"}


def test_less_memory_than_realmemory_and_missing_gpu_and_ports(tmp_path: Path) -> None:
    _port(tmp_path, "mlx5_0", "4: ACTIVE", "400 Gb/sec (4X NDR)")
    _port(tmp_path, "mlx5_1", "1: DOWN", "10 Gb/sec (4X SDR)")
    _port(tmp_path, "mlx5_2", "4: ACTIVE", "200 Gb/sec (4X HDR)")
    ib = [{"device": f"mlx5_{i}", "rate_gbps": 400} for i in range(4)]
    planned = shape.normalize(
        {
            "sockets": 2,
            "cores_per_socket": 48,
            "threads_per_core": 2,
            "real_memory_mb": 996147,
            "memory_mb": 1048576,
            "gpus": 8,
            "ib": ib,
        }
    )
    found = {
        "sockets": 2,
        "cores_per_socket": 48,
        "threads_per_core": 2,
        "real_memory_mb": 900000,
        "gpus": 7,
        "ib": [shape.read_port(tmp_path, p["device"]) for p in ib],
    }
    rows = {r["check"]: (r["planned"], r["found"]) for r in shape.differences(planned, found, 0.1)}
    assert rows == {
        "memory_mb (node would be INVALID)": (">= 996147", "900000"),
        "gpus": ("8", "7"),
        "mlx5_1 state": ("ACTIVE", "DOWN"),
        "mlx5_2 rate_gbps": ("400", "200"),
        "mlx5_3 state": ("ACTIVE", "missing"),
    }


def test_an_ethernet_port_named_as_a_rail_is_reported(tmp_path: Path) -> None:
    """Every mlx5 adapter is named mlx5_N: a front-end ConnectX-6 Dx enumerated among the
    rails is ACTIVE at a high rate, so only its link layer shows it is no IB rail."""
    for dev, link in (("mlx5_0", "InfiniBand"), ("mlx5_1", "Ethernet")):
        rate = "400 Gb/sec (4X NDR)" if dev == "mlx5_0" else "400 Gb/sec"
        _port(tmp_path, dev, "4: ACTIVE", rate)
        (tmp_path / dev / "ports" / "1" / "link_layer").write_text(link + "\n")
    _port(tmp_path, "mlx5_2", "4: ACTIVE", "400 Gb/sec (4X NDR)")  # no link_layer: not checked
    ib = [{"device": f"mlx5_{i}", "rate_gbps": 400} for i in range(3)]
    found = {"ib": [shape.read_port(tmp_path, p["device"]) for p in ib]}
    rows = shape.differences(shape.normalize({"ib": ib}), found, 0.1)
    assert rows == [
        {
            "check": "mlx5_1 link_layer (not an IB rail: device names?)",
            "planned": "InfiniBand",
            "found": "Ethernet",
        }
    ]


def test_a_matching_node_has_no_differences() -> None:
    planned = shape.normalize(
        {
            "sockets": 1,
            "cores_per_socket": 2,
            "threads_per_core": 1,
            "real_memory_mb": 22374,
            "memory_mb": 23552,
            "gpus": None,
        }
    )
    found = {
        "sockets": 1,
        "cores_per_socket": 2,
        "threads_per_core": 1,
        "real_memory_mb": 24105,
        "gpus": 8,
        "ib": [],
    }
    assert shape.differences(planned, found, 0.1) == []


# ----------------------------------------------------------------- sacctmgr


QOS = [
    {"name": "normal", "priority": 0},
    {
        "name": "debug",
        "priority": 2000,
        "max_wall": "00:30:00",
        "max_tres_per_user": "gres/gpu=16",
        "max_jobs_per_user": 2,
    },
]


def test_qos_are_added_then_left_alone() -> None:
    fresh = sacct.parse(
        "normal|0|||||\n", ["Name", "Priority", "MaxWall", "MaxTRESPU", "MaxJobsPU", "MaxSubmitPU"]
    )
    cmds = sacct.plan_qos(QOS, fresh)
    assert cmds == [
        [
            "add",
            "qos",
            "debug",
            "Priority=2000",
            "MaxWall=00:30:00",
            "MaxTRESPerUser=gres/gpu=16",
            "MaxJobsPerUser=2",
        ]
    ]
    converged = [
        {"Name": "normal", "Priority": "0"},
        {
            "Name": "debug",
            "Priority": "2000",
            "MaxWall": "30:00",
            "MaxTRESPU": "gres/gpu=16",
            "MaxJobsPU": "2",
        },
    ]
    assert sacct.plan_qos(QOS, converged) == []
    changed = [converged[0], {**converged[1], "Priority": "10"}]
    assert sacct.plan_qos(QOS, changed) == [
        ["modify", "qos", "where", "name=debug", "set", "Priority=2000"]
    ]


def test_times_compare_by_value() -> None:
    assert sacct.seconds("1-00:00:00") == 86400
    assert sacct.seconds("30") == 1800
    assert sacct.seconds("00:30:00") == sacct.seconds("30:00") == 1800
    assert sacct.seconds("") is None


ACCOUNTS = [
    {
        "name": "research",
        "fairshare": 100,
        "default_qos": "normal",
        "qos": ["normal", "high", "debug"],
        "users": ["alice", "bob"],
    },
    {"name": "ops", "users": ["bob"]},
]


def test_accounts_and_users_are_added_with_their_default_account() -> None:
    cmds = sacct.plan_accounts("lab", ACCOUNTS, [{"Account": "root", "User": ""}], [])
    assert cmds[0] == [
        "add",
        "account",
        "research",
        "Cluster=lab",
        "Parent=root",
        "Description=research",
        "Organization=research",
        "Fairshare=100",
        "DefaultQOS=normal",
        "QOS=debug,high,normal",
    ]
    users = [c for c in cmds if c[:2] == ["add", "user"]]
    assert ["add", "user", "bob", "Account=ops", "Cluster=lab", "DefaultAccount=research"] in users
    assert len(users) == 3


def test_converged_accounts_need_nothing_and_drift_is_corrected() -> None:
    assocs = [
        {
            "Account": "research",
            "User": "",
            "Fairshare": "100",
            "DefaultQOS": "normal",
            "QOS": "debug,high,normal",
        },
        {"Account": "research", "User": "alice"},
        {"Account": "research", "User": "bob"},
        {"Account": "ops", "User": ""},
        {"Account": "ops", "User": "bob"},
    ]
    users = [
        {"User": "alice", "DefaultAccount": "research"},
        {"User": "bob", "DefaultAccount": "research"},
    ]
    assert sacct.plan_accounts("lab", ACCOUNTS, assocs, users) == []
    drifted = [{**assocs[0], "Fairshare": "1"}, *assocs[1:]]
    users[1]["DefaultAccount"] = "ops"
    assert sacct.plan_accounts("lab", ACCOUNTS, drifted, users) == [
        ["modify", "account", "where", "name=research", "cluster=lab", "set", "Fairshare=100"],
        ["modify", "user", "where", "name=bob", "set", "DefaultAccount=research"],
    ]


# ----------------------------------------------------------------- fabric facts


def test_hca_ipoib_interface_and_guid(tmp_path: Path) -> None:
    base = tmp_path / "class" / "infiniband" / "mlx5_0"
    (base / "ports" / "1" / "gids").mkdir(parents=True)
    (base / "ports" / "1" / "gids" / "0").write_text("fe80:0000:0000:0000:b83f:d203:00a1:b2c4\n")
    for name, kind in (("enp1s0np0", "1"), ("ibp1s0", "32")):
        (base / "device" / "net" / name).mkdir(parents=True)
        (base / "device" / "net" / name / "type").write_text(kind + "\n")
    assert facts.hca(tmp_path, "mlx5_0") == {
        "present": True,
        "netdev": "ibp1s0",
        "port_guid": "0xb83fd20300a1b2c4",
    }
    assert facts.hca(tmp_path, "mlx5_1")["present"] is False


def test_frontend_interface_is_found_by_address() -> None:
    ip_json = json.dumps(
        [
            {"ifname": "lo", "addr_info": [{"local": "127.0.0.1"}]},
            {"ifname": "eno8303", "addr_info": [{"local": "10.130.0.11"}]},
        ]
    )
    assert facts.interface_of("10.130.0.11", ip_json) == "eno8303"
    assert facts.interface_of("10.130.0.99", ip_json) == ""


# ----------------------------------------------------------------- health check


def _fixture(tmp_path: Path, gpus: int, mounted: list[str], mem_kb: int) -> dict[str, str]:
    dev = tmp_path / "dev"
    dev.mkdir()
    for i in range(gpus):
        (dev / f"nvidia{i}").symlink_to("/dev/null")  # a character device, like the real ones
    (tmp_path / "mounts").write_text("".join(f"srv:/x {m} nfs4 rw 0 0\n" for m in mounted))
    (tmp_path / "meminfo").write_text(f"MemTotal:       {mem_kb} kB\n")
    return {
        "dev": str(dev),
        "sysfs": str(tmp_path / "ib"),
        "mounts": str(tmp_path / "mounts"),
        "meminfo": str(tmp_path / "meminfo"),
    }


CFG: dict[str, Any] = {
    "gpus": 8,
    "ib": [{"device": "mlx5_0", "rate_gbps": 400}],
    "mounts": ["/"],
    "min_memory_mb": 1000,
    "dcgm": {"enabled": False},
}


def test_health_finds_every_planned_fault(tmp_path: Path) -> None:
    paths = _fixture(tmp_path, gpus=7, mounted=[], mem_kb=512 * 1024)
    _port(tmp_path / "ib", "mlx5_0", "1: DOWN", "400 Gb/sec (4X NDR)")
    assert health.problems_of(CFG, "health", paths) == [
        "7 of 8 GPUs",
        "mlx5_0 DOWN",
        "/ not mounted",
        "512 MB memory, 1000 MB planned",
    ]


def test_a_healthy_node_passes(tmp_path: Path) -> None:
    paths = _fixture(tmp_path, gpus=8, mounted=["/"], mem_kb=4 * 1024 * 1024)
    _port(tmp_path / "ib", "mlx5_0", "4: ACTIVE", "400 Gb/sec (4X NDR)")
    assert health.problems_of(CFG, "prolog", paths) == []


@pytest.mark.parametrize(
    ("state", "reason", "problems", "auto", "expected"),
    [
        ("IDLE", "", ["7 of 8 GPUs"], False, "State=DRAIN"),
        ("IDLE+DRAIN", "maintenance", ["7 of 8 GPUs"], False, None),  # an admin's reason stays
        ("IDLE+DRAIN", "podplan-health: 7 of 8 GPUs", [], False, None),  # stays drained
        ("IDLE+DRAIN", "podplan-health: 7 of 8 GPUs", [], True, "State=RESUME"),
        ("IDLE+DRAIN", "maintenance", [], True, None),  # never resumes an admin's drain
    ],
)
def test_health_drains_and_resumes_only_its_own(
    monkeypatch: pytest.MonkeyPatch,
    state: str,
    reason: str,
    problems: list[str],
    auto: bool,
    expected: str | None,
) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], timeout: float) -> tuple[int, str]:
        calls.append(argv)
        if argv[1] == "--oneliner":
            return 0, f"NodeName=gpu001 State={state} Reason={reason}"
        return 0, ""

    monkeypatch.setattr(health, "run", fake_run)
    health.act("gpu001", problems, auto)
    updates = [c for c in calls if c[1] == "update"]
    if expected is None:
        assert updates == []
    else:
        assert len(updates) == 1 and expected in updates[0]
        if expected == "State=DRAIN":
            assert "Reason=podplan-health: 7 of 8 GPUs" in updates[0]


files = _load(ROLES / "fabric/library/podplan_files.py", "podplan_files")


def test_owned_files_are_written_when_different_and_stale_ones_removed(tmp_path: Path) -> None:
    (tmp_path / "60-podplan-ipoib-rail0.network").write_text("same")
    (tmp_path / "60-podplan-ipoib-rail1.network").write_text("old")
    (tmp_path / "60-podplan-ipoib-rail9.network").write_text("a rail no longer planned")
    (tmp_path / "10-site.network").write_text("not ours")
    wanted = {
        "60-podplan-ipoib-rail0.network": "same",
        "60-podplan-ipoib-rail1.network": "new",
        "60-podplan-ipoib-rail2.network": "added",
    }
    write, stale = files.plan(tmp_path, "60-podplan-ipoib-", wanted)
    assert write == ["60-podplan-ipoib-rail1.network", "60-podplan-ipoib-rail2.network"]
    assert stale == ["60-podplan-ipoib-rail9.network"]

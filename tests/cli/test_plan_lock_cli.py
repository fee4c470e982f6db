"""The plan lock through the command line: plan keeps it and says what changed, bom and
validate plan the same cluster, --fresh sets it aside, a bad lock or removal is located."""

from __future__ import annotations

from pathlib import Path

from tests.cli.runner import podplan

SPEC = Path("examples/slurm-lab.yaml")
LOCK = "reports/slurm-lab/plan.lock.yaml"


def _spec(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    text = SPEC.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _line(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, x in enumerate(lines, start=1) if needle in x and not x.startswith("#"))


def test_plan_keeps_the_lock_and_says_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert podplan("plan", str(SPEC), "--out", str(out)).code == 0
    lock = (out / LOCK).read_text(encoding="utf-8")
    assert "gpu001: {role: compute" in lock and "\nchanges: []\n" in lock
    again = podplan("plan", str(SPEC), "--out", str(out))
    assert again.code == 0 and "0 written" in again.out and "Changes" not in again.out
    grown = _spec(
        tmp_path, "grown.yaml", "gpus: 24\n  login_nodes: 1", "gpus: 32\n  login_nodes: 2"
    )
    dry = podplan("plan", str(grown), "--out", str(out), "--dry-run")
    assert "3 device(s) added: gpu004,login02,oob-r03" in dry.out
    assert (out / LOCK).read_text(encoding="utf-8") == lock  # a dry run writes nothing
    r = podplan("plan", str(grown), "--out", str(out))
    assert r.code == 0 and r.out.startswith("Changes against the plan lock: 3 device(s) added")
    bom = podplan("bom", str(grown), "--out", str(out), "--format", "csv")
    assert bom.out == (out / "reports/slurm-lab/bom.csv").read_text(encoding="utf-8")
    steady = podplan("plan", str(grown), "--out", str(out))
    assert "0 written" in steady.out and "Changes" not in steady.out
    assert podplan("validate", str(grown), "--out", str(out)).code == 0


def test_fresh_numbers_everything_again_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert podplan("plan", str(SPEC), "--out", str(out)).code == 0
    named = _spec(tmp_path, "named.yaml", "gpus: 24", "gpus: 16\n  remove_nodes: [gpu001]")
    assert podplan("plan", str(named), "--out", str(out)).code == 0
    hosts = sorted(p.stem for p in (out / "inventories/slurm-lab/host_vars").glob("gpu*.yml"))
    assert hosts == ["gpu002", "gpu003"]
    r = podplan("plan", str(named), "--out", str(out), "--fresh")
    assert r.code == 0 and "Planned with --fresh" in r.out
    hosts = sorted(p.stem for p in (out / "inventories/slurm-lab/host_vars").glob("gpu*.yml"))
    assert hosts == ["gpu001", "gpu002"]
    lock = (out / LOCK).read_text(encoding="utf-8")
    assert "Planned with --fresh" in lock and "\nretired: {}\n" in lock
    assert (
        "hardware.remove_nodes has no effect" in (out / "reports/slurm-lab/plan.yaml").read_text()
    )


def test_a_removal_that_names_no_node_is_located(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert podplan("plan", str(SPEC), "--out", str(out)).code == 0
    bad = _spec(tmp_path, "bad.yaml", "gpus: 24", "gpus: 16\n  remove_nodes: [gpu01]")
    r = podplan("plan", str(bad), "--out", str(out))
    assert r.code == 2
    line = _line(bad, "remove_nodes")
    assert f"{bad}:{line}: hardware.remove_nodes[0]: gpu01 is not in" in r.err
    assert "gpu001" in r.err  # what compute nodes are called
    login = _spec(tmp_path, "login.yaml", "gpus: 24", "gpus: 16\n  remove_nodes: [login01]")
    assert "login01 is a login" in podplan("plan", str(login), "--out", str(out)).err


def test_a_damaged_lock_stops_every_command_with_its_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert podplan("plan", str(SPEC), "--out", str(out)).code == 0
    path = out / LOCK
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("mgmt: 169.254.77.13,", "mgmt: 169.254.77.x,", 1), "utf-8")
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if ".77.x" in x)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for cmd in (["plan"], ["bom"], ["validate"], ["plan", "--dry-run"]):
        r = podplan(*cmd[:1], str(SPEC), "--out", str(out), *cmd[1:])
        assert r.code == 2, cmd
        assert f"{path}:{line}: devices.gpu001.mgmt" in r.err, r.err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # the lock is podplan's file edited by hand: --fresh replaces it only with --force
    r = podplan("plan", str(SPEC), "--out", str(out), "--fresh")
    assert r.code == 2 and f"{path}: edited by hand" in r.err, r.err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert podplan("plan", str(SPEC), "--out", str(out), "--fresh", "--force").code == 0


def test_a_cidr_change_that_would_renumber_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert podplan("plan", str(SPEC), "--out", str(out)).code == 0
    moved = _spec(
        tmp_path, "moved.yaml", "mgmt_cidr: 169.254.77.0/24", "mgmt_cidr: 169.254.100.0/24"
    )
    r = podplan("plan", str(moved), "--out", str(out))
    line = _line(moved, "mgmt_cidr")
    assert r.code == 2 and f"{moved}:{line}: network.mgmt_cidr:" in r.err and "--fresh" in r.err
    wider = _spec(
        tmp_path, "wider.yaml", "mgmt_cidr: 169.254.77.0/24", "mgmt_cidr: 169.254.76.0/23"
    )
    r = podplan("plan", str(wider), "--out", str(out))
    assert r.code == 0 and "network.mgmt_cidr 169.254.77.0/24 -> 169.254.76.0/23" in r.out

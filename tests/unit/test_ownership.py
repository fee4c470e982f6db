"""The ownership contract on a real generated tree (examples/slurm-lab.yaml).

podplan owns exactly the files its manifest lists; every other file is the user's, in any
directory, and survives regeneration byte for byte; hand edits are refused without --force;
files podplan stops generating are removed; a tree from before manifests is adopted safely.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from generator import pipeline
from generator.errors import PodplanError
from generator.render.manifest import read_manifest
from generator.render.update import apply, prepare
from tests.cli.runner import podplan
from tests.unit.test_render_write import snapshot

SPEC = "examples/slurm-lab.yaml"
INV = "inventories/slurm-lab"
USER_FILES = {
    f"{INV}/.secrets/munge.key": "the cluster's munge key: losing it restarts every daemon",
    f"{INV}/.secrets/vault.yml": "$ANSIBLE_VAULT;1.1;AES256\n6162630a\n",
    f"{INV}/group_vars/all/site.yml": "---\nntp_servers: [ntp.example.org]\n",
    f"{INV}/group_vars/slurm_compute/site.yml": "---\nslurm_x: 1\n",
    f"{INV}/host_vars/gpu001/local.yml": "---\nlocal_disk: /dev/nvme1n1\n",
    "reports/slurm-lab/purchase-order.pdf": "%PDF-1.7 not generated",
    "stacks/aws/Pulumi.prod.yaml": "config:\n  aws:region: eu-west-1\n",
    "README.md": "our cluster repo\n",
}


def _outputs(spec: str = SPEC) -> pipeline.Outputs:
    return pipeline.outputs(pipeline.load_checked(spec))


def _plan(out: Path, spec: str = SPEC, force: bool = False) -> None:
    got = _outputs(spec)
    apply(prepare(out, got.files, got.manifest, force))


def _add_user_files(out: Path) -> None:
    for path, text in USER_FILES.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text, encoding="utf-8")


def _user_state(out: Path) -> dict[str, bytes]:
    return {p: (out / p).read_bytes() for p in USER_FILES}


def _shrunk(tmp_path: Path, **edits: str) -> str:
    text = Path(SPEC).read_text(encoding="utf-8").replace("gpus: 24", "gpus: 16")
    for old, new in edits.items():
        text = text.replace(old, new)
    spec = tmp_path.parent / f"{tmp_path.name}-spec" / "slurm-lab.yaml"  # outside the tree
    spec.parent.mkdir(exist_ok=True)
    spec.write_text(text, encoding="utf-8")
    return str(spec)


def test_manifest_lists_every_generated_file_with_its_hash(tmp_path: Path) -> None:
    _plan(tmp_path)
    got = _outputs()
    manifest = read_manifest(tmp_path, got.manifest)
    assert manifest is not None
    assert manifest.paths() == {f.path for f in got.files} - {got.manifest}
    for path, digest in manifest.files.items():
        assert hashlib.sha256((tmp_path / path).read_bytes()).hexdigest() == digest
    assert set(manifest.stack_keys) == {"stacks/aws/Pulumi.slurm-lab.yaml"}


def test_user_files_survive_regeneration_growth_and_shrink(tmp_path: Path) -> None:
    _plan(tmp_path)
    _add_user_files(tmp_path)
    mine = _user_state(tmp_path)
    _plan(tmp_path)
    _plan(tmp_path, _shrunk(tmp_path, **{"clouds: [aws]": "clouds: [gcp]"}))
    _plan(tmp_path)
    assert _user_state(tmp_path) == mine  # munge key, vault, site vars: untouched


def test_a_removed_node_and_a_dropped_cloud_are_removed(tmp_path: Path) -> None:
    _plan(tmp_path)
    got = _outputs(_shrunk(tmp_path, **{"clouds: [aws]": "clouds: [gcp]"}))
    u = prepare(tmp_path, got.files, got.manifest)
    assert u.removed == [f"{INV}/host_vars/gpu003.yml", "stacks/aws/Pulumi.slurm-lab.yaml"]
    assert "stacks/gcp/Pulumi.slurm-lab.yaml" in u.added
    apply(u)
    assert not (tmp_path / "stacks/aws").exists()  # emptied by the removal, so pruned


def test_a_hand_edit_is_refused_by_name_and_nothing_is_written(tmp_path: Path) -> None:
    _plan(tmp_path)
    edited = tmp_path / f"{INV}/host_vars/gpu002.yml"
    edited.write_text(edited.read_text(encoding="utf-8") + "extra: 1\n", encoding="utf-8")
    before = snapshot(tmp_path)
    r = podplan("plan", _shrunk(tmp_path), "--out", str(tmp_path))
    assert r.code == 2 and r.out == ""
    assert f"{edited}: edited by hand since podplan wrote it" in r.err
    assert snapshot(tmp_path) == before

    forced = podplan("plan", _shrunk(tmp_path), "--out", str(tmp_path), "--force")
    assert forced.code == 0 and f"forced {edited}: edited by hand" in forced.out
    assert "extra: 1" not in edited.read_text(encoding="utf-8")


def test_an_edited_file_podplan_no_longer_generates_is_kept_without_force(tmp_path: Path) -> None:
    _plan(tmp_path)
    stale = tmp_path / f"{INV}/host_vars/gpu003.yml"
    stale.write_text("---\nmy_note: keep me\n", encoding="utf-8")
    got = _outputs(_shrunk(tmp_path))
    u = prepare(tmp_path, got.files, got.manifest)
    assert [r.path for r in u.refusals] == [f"{INV}/host_vars/gpu003.yml"]
    assert "no longer generates" in u.refusals[0].reason
    with pytest.raises(PodplanError, match=r"gpu003\.yml: edited by hand"):
        apply(u)
    assert stale.exists()


def test_a_user_file_where_podplan_writes_is_refused(tmp_path: Path) -> None:
    target = tmp_path / f"{INV}/hosts.yml"
    target.parent.mkdir(parents=True)
    target.write_text("all: {hosts: {mine: null}}\n", encoding="utf-8")
    got = _outputs()
    u = prepare(tmp_path, got.files, got.manifest)
    assert [(r.path, r.reason) for r in u.refusals] == [
        (f"{INV}/hosts.yml", "not written by podplan, and in the way of a file it writes")]


def test_a_tree_from_before_manifests_is_adopted_and_nothing_removed(tmp_path: Path) -> None:
    _plan(tmp_path, _shrunk(tmp_path, **{"gpus: 16": "gpus: 32"}))  # gpu004 exists
    (tmp_path / "reports/slurm-lab/manifest.json").unlink()
    _add_user_files(tmp_path)
    got = _outputs()
    u = prepare(tmp_path, got.files, got.manifest)
    assert not u.refusals and not u.removed
    assert any("gpu004.yml: it has podplan's header but no manifest" in n for n in u.notes)
    apply(u)
    assert (tmp_path / f"{INV}/host_vars/gpu004.yml").exists()
    assert read_manifest(tmp_path, got.manifest) is not None


def test_a_damaged_manifest_is_a_user_error(tmp_path: Path) -> None:
    _plan(tmp_path)
    (tmp_path / "reports/slurm-lab/manifest.json").write_text("{not json", encoding="utf-8")
    r = podplan("plan", SPEC, "--out", str(tmp_path))
    assert r.code == 2 and "cannot read podplan's manifest" in r.err
    assert "restore it from version control" in r.err


def test_check_and_diff_write_nothing(tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    for flag in ("--check", "--diff"):
        r = podplan("plan", SPEC, "--out", str(tmp_path / "out"), flag)
        assert r.code == (1 if flag == "--check" else 0)
        assert snapshot(tmp_path) == before
    _plan(tmp_path / "out")
    _add_user_files(tmp_path / "out")
    assert podplan("plan", SPEC, "--out", str(tmp_path / "out"), "--check").out == (
        f"up to date: {tmp_path / 'out'}\n")
    assert podplan("plan", SPEC, "--out", str(tmp_path / "out"), "--check", "-q").code == 0
    r = podplan("plan", _shrunk(tmp_path), "--out", str(tmp_path / "out"), "--check")
    assert r.code == 1
    assert f"would remove {tmp_path / 'out' / INV / 'host_vars/gpu003.yml'}" in r.out
    assert r.out.splitlines()[-1].startswith(f"out of date: {tmp_path / 'out'}")
    assert podplan("plan", "no-such.yaml", "--check").code == 2


def test_diff_reports_files_devices_and_bom(tmp_path: Path) -> None:
    _plan(tmp_path)
    r = podplan("plan", _shrunk(tmp_path), "--out", str(tmp_path), "--diff")
    assert r.code == 0
    lines = r.out.splitlines()
    assert f"  - {tmp_path / INV / 'host_vars/gpu003.yml'}" in lines
    assert "  - compute node gpu003" in lines
    # the changes in words first, the built fabric kept among them (lock.fabric)
    assert lines[0] == "notes:" and lines[1].startswith("  Changes against the plan lock: ")
    assert any("The built compute fabric (2 leaves) is kept" in ln for ln in lines), lines[:6]
    assert any(ln.startswith("  ~ compute xe9680-h100-sxm: quantity 3 -> 2") for ln in lines)
    shrunk = tmp_path.parent / f"{tmp_path.name}-shrunk"  # the same tree (and plan lock)
    shutil.copytree(tmp_path, shrunk)
    assert podplan("plan", _shrunk(tmp_path), "--out", str(shrunk), "-q").code == 0
    before, after = (
        json.loads((root / "reports/slurm-lab/bom.json").read_text())["totals"]["capex_usd"]
        for root in (tmp_path, shrunk)
    )
    assert after < before  # one GPU server fewer
    assert lines[-1] == f"capex: {before:,.2f} -> {after:,.2f} USD ({after - before:+,.2f})"
    same = podplan("plan", SPEC, "--out", str(tmp_path), "--diff").out.splitlines()
    assert "devices: 0 added, 0 removed, 0 with identity moves" in same
    assert "bill of materials: unchanged" in same


def test_manifest_is_json_with_provenance_first() -> None:
    got = _outputs()
    text = next(f.content for f in got.files if f.path == got.manifest)
    doc = json.loads(text)
    assert list(doc)[:2] == ["generated_by", "regenerate"]
    assert doc["generated_by"] == f"podplan from {SPEC}"

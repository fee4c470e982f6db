"""A grown cluster's inventory, read by the real ``ansible-inventory``: every host already
built keeps its ``ansible_host``; the new ones get addresses nobody had."""

from __future__ import annotations

from pathlib import Path

from generator import pipeline
from generator.render.write import write_tree
from tests.integration.test_ansible_inventory import ansible_inventory

SPEC = Path("examples/slurm-lab.yaml")


def _plan(spec: Path, out: Path, fresh: bool = False) -> dict[str, str]:
    """Plan ``spec`` into ``out`` (keeping its lock) and read ``ansible_host`` per host."""
    loaded = pipeline.load_checked(str(spec))
    done = pipeline.outputs(loaded, out_dir=out, fresh=fresh)
    write_tree(out, done.files)
    inv = ansible_inventory(out / "inventories" / "slurm-lab")
    return {h: v["ansible_host"] for h, v in inv["_meta"]["hostvars"].items()}


def test_growth_keeps_every_ansible_host(tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _plan(SPEC, out)
    text = SPEC.read_text(encoding="utf-8")
    grown = tmp_path / "slurm-lab.yaml"
    grown.write_text(
        text.replace("gpus: 24", "gpus: 32").replace("login_nodes: 1", "login_nodes: 2")
    )
    after = _plan(grown, out)
    assert set(after) == set(before) | {"gpu004", "login02"}
    assert {h: after[h] for h in before} == before
    assert not {after["gpu004"], after["login02"]} & set(before.values())
    # without the lock the new login node pushes every GPU node's address up by one
    fresh = _plan(grown, tmp_path / "fresh", fresh=True)
    assert fresh["gpu001"] != before["gpu001"]

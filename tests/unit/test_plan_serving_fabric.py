"""A serving-only cluster whose replicas each fit one node buys no compute fabric (nothing
crosses nodes); a multi-node replica, a pin, growth room or a built fabric keep one."""

from __future__ import annotations

from pathlib import Path

from generator import pipeline
from generator.bom import BillOfMaterials
from generator.bom.writers import to_markdown
from generator.plan.lock.read import parse_lock
from generator.plan.lock.text import lock_text
from generator.plan.models import ClusterPlan

SERVE = """\
name: serve2
workloads:
  - name: chat
    kind: inference
    model: llama3.1-70b
    precision: fp8
    input_tokens: 2000
    output_tokens: 500
    requests_per_minute: 1200
    {pins}
hardware:
  server: xe9680
  gpu: h100-sxm-80gb
  gpus: 16
  {hardware}
provisioning:
  clouds: [aws]
"""


def _plan(tmp_path: Path, pins: str = "", hardware: str = "",
          out: Path | None = None) -> tuple[ClusterPlan, BillOfMaterials]:
    spec = tmp_path / "serve2.yaml"
    spec.write_text(SERVE.format(pins=pins, hardware=hardware))
    loaded = pipeline.load_checked(str(spec))
    plan = pipeline.plan(loaded, out_dir=out)
    return plan, pipeline.bill_of_materials(loaded, plan)


def _fabric_switches(plan: ClusterPlan) -> int:
    return sum(1 for s in plan.switches if s.network == "compute")


def test_replicas_within_a_node_buy_no_fabric_and_say_why(tmp_path: Path) -> None:
    plan, bom = _plan(tmp_path)
    assert len(plan.nodes_with_role("compute")) == 2
    assert _fabric_switches(plan) == 0 and not any(n.role == "ufm" for n in plan.nodes)
    assert not {line.category for line in bom.lines} & {"compute fabric"}
    assert plan.fabric.absent_because == "serving only, every replica fits one node"
    assert "every replica fits one node (chat: TP" in plan.fabric.design_notes[0]
    assert "set hardware.east_west_nics_per_node" in plan.fabric.design_notes[0]
    assert "- Fabric: none (serving only, every replica fits one node)" in to_markdown(bom)


def test_a_pin_or_a_multi_node_replica_keeps_the_fabric(tmp_path: Path) -> None:
    pinned, _ = _plan(tmp_path, hardware="east_west_nics_per_node: 8")
    assert _fabric_switches(pinned) >= 2 and not pinned.fabric.absent_because
    across, _ = _plan(tmp_path, pins="parallelism: {tp: 16}")
    assert _fabric_switches(across) >= 2


def test_a_built_fabric_is_kept_on_a_re_plan(tmp_path: Path) -> None:
    # a cluster planned (and built) with a fabric keeps it: taking built switches out of a
    # running cluster is not the planner's call
    built, _ = _plan(tmp_path, hardware="east_west_nics_per_node: 8")
    lock_file = tmp_path / "reports" / "serve2" / "plan.lock.yaml"
    lock_file.parent.mkdir(parents=True)
    lock_file.write_text(lock_text(built))
    parse_lock(lock_file.read_text(), str(lock_file))
    again, _ = _plan(tmp_path, out=tmp_path)
    assert _fabric_switches(again) == _fabric_switches(built)

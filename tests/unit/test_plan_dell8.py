"""The seed's Dell validated 8-node design: configuration 1 (8x CX-7) and 2 (4x CX-7)."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.synthetic_plan import synthetic_sizing, synthetic_spec
from generator.catalog.load import default_catalog
from generator.plan.build import build_plan
from generator.plan.invariants import plan_problems
from generator.plan.models import ClusterPlan

DELL = {
    "workloads": [
        {"name": "llama2-70b-pretrain", "kind": "pretrain", "model": "llama2-70b", "steps": 500}
    ],
    "storage": {"dataset_tb": 20, "checkpoint_keep": 3, "checkpoint_write_seconds": 120},
    "facility": {"rack_power_kw": 40},
    "fabric": {"subnet_manager": "ufm"},
    "provisioning": {"scheduler": "bcm"},
}


def _dell(nics: int, **extra: dict[str, object]) -> ClusterPlan:
    name = f"dell-8node-config{1 if nics == 8 else 2}"
    sections = {**DELL, "hardware": {"gpus": 64, "east_west_nics_per_node": nics}, **extra}
    spec = synthetic_spec(name, 8, **sections)
    # Llama 2 70B full training: bf16 weights + fp32 master + Adam moments ~ 14 B/param.
    sizing = synthetic_sizing(name, 8, checkpoint_gb=980.0, time_hours=3.0)
    return build_plan(spec, f"examples/{name}.yaml", sizing, default_catalog())


def _models(plan: ClusterPlan) -> Counter[str]:
    return Counter(n.model for n in plan.nodes) + Counter(s.model for s in plan.switches)


def test_config1_matches_the_dell_bill_of_switches() -> None:
    plan = _dell(8)
    m = _models(plan)
    assert m["xe9680"] == 8
    assert m["qm9790"] == 2  # Dell: 2x QM9790
    assert m["s5448f-on"] == 2  # Dell: 2x S54xx front end
    assert m["n3248te-on"] == len(plan.racks)  # Dell: N3248 OOB (one per rack here)
    assert m["r660"] == 3  # Dell: R660 BCM head (podplan: HA pair + a login node)
    assert m["powerscale-f710"] >= 3
    assert (
        plan.fabric.leaf_to_leaf_links
        + len([x for x in plan.links if x.network == "compute" and x.a.startswith("ufm")])
        == 33
    )
    assert any("same two switches" in n for n in plan.fabric.design_notes)
    assert plan_problems(plan, default_catalog()) == []


def test_config2_uses_four_rails_and_dells_two_switches() -> None:
    plan = _dell(4)
    assert plan.fabric.rails == 4
    assert plan.fabric.leaf_switches == 2 and plan.fabric.tiers == 1  # Dell: 2x QM9790
    assert plan.fabric.node_to_leaf_links == 32
    for node in plan.nodes_with_role("compute"):
        assert [f.device for f in node.addresses.fabric] == [f"mlx5_{r}" for r in range(4)]
    assert any("same two switches" in n for n in plan.fabric.design_notes)
    assert plan_problems(plan, default_catalog()) == []


def test_config2_with_growth_gets_dells_two_switches() -> None:
    plan = _dell(4, fabric={"subnet_manager": "ufm", "growth_nodes": 8})
    assert plan.fabric.leaf_switches == 2
    assert plan.fabric.designed_nodes == 16
    assert plan_problems(plan, default_catalog()) == []


def test_dell_storage_holds_data_and_three_checkpoints() -> None:
    st = _dell(8).storage
    assert st.required_tb == pytest.approx(20 + 3 * 0.98)
    assert st.usable_tb >= st.required_tb
    assert st.checkpoint_write_s <= 120
    assert st.nodes == 3
    assert any("estimate" in n for n in st.notes)


def test_dell_bcm_plan_has_an_ha_head_pair() -> None:
    plan = _dell(8)
    assert plan.scheduler_kind == "bcm"
    assert plan.scheduler.controllers == ["head01", "head02"]
    assert [n.name for n in plan.nodes[:3]] == ["head01", "head02", "login01"]

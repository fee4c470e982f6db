"""Spec checks that need the catalog and the stack profiles: FP8 only where the GPU has it,
pins that can exist, NIC counts the server offers, GPU counts that are not whole servers.
Each refusal is located (field path and line) and says what is allowed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import pipeline
from generator.catalog.load import default_catalog
from generator.errors import PodplanError, Problem
from generator.sizing import size
from generator.sizing.model.hardware import node_from_server

CATALOG = default_catalog()
TRAIN = {"name": "t", "kind": "pretrain", "model": "llama2-70b", "steps": 10}


def write(tmp_path: Path, workload: dict[str, Any], **hardware: Any) -> str:
    doc = {"name": "p", "workloads": [workload], "hardware": hardware}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return str(path)


def problems(tmp_path: Path, workload: dict[str, Any], **hardware: Any) -> list[Problem]:
    with pytest.raises(PodplanError) as err:
        pipeline.load_checked(write(tmp_path, workload, **hardware))
    return err.value.problems


def only(tmp_path: Path, workload: dict[str, Any], **hardware: Any) -> Problem:
    found = problems(tmp_path, workload, **hardware)
    assert len(found) == 1, found
    assert found[0].line is not None
    return found[0]


def test_fp8_on_a100_is_a_located_error(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "precision": "fp8"}, server="dgx-a100", gpu="a100-sxm-80gb")
    assert p.path == "workloads[0].precision"
    assert "no FP8" in p.message and p.allowed == "bf16"


def test_tp_beyond_a_server_and_not_dividing_heads(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "parallelism": {"tp": 16}})
    assert p.path == "workloads[0].parallelism.tp" and "spans servers" in p.message
    p = only(tmp_path, {**TRAIN, "model": "llama2-13b", "parallelism": {"tp": 3}})
    assert "40 attention heads" in p.message


def test_pins_beyond_the_cluster(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "parallelism": {"tp": 8, "pp": 4, "dp": 4}}, gpus=64)
    assert p.path == "workloads[0].parallelism"
    assert "128 GPUs" in p.message and "64" in p.message


def test_pipeline_and_interleaving_pins(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "parallelism": {"pp": 96}})
    assert "exceeds the model's 80 layers" in p.message
    p = only(tmp_path, {**TRAIN, "parallelism": {"pp": 4, "vp": 3}})
    assert "does not divide the 20 layers per stage" in p.message
    p = only(tmp_path, {**TRAIN, "parallelism": {"pp": 1, "vp": 2}})
    assert p.path == "workloads[0].parallelism.vp"


def test_context_parallel_needs_2cp_chunks(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "sequence_length": 4100, "parallelism": {"cp": 4}})
    assert "2 x cp = 8" in p.message


def test_dp_must_divide_the_batch(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "global_batch_size": 100, "parallelism": {"dp": 8}})
    assert p.path == "workloads[0].parallelism.dp"


def test_stack_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    p = only(tmp_path, {**TRAIN, "framework": "hf", "parallelism": {"pp": 2}})
    assert "does not run pipeline parallelism" in p.message
    p = only(tmp_path, {**TRAIN, "framework": "fsdp", "parallelism": {"recompute": "selective"}})
    assert p.allowed == "none | full"


def test_uneven_pipeline_is_a_note_not_an_error(tmp_path: Path) -> None:
    loaded = pipeline.load_checked(write(tmp_path, {**{**TRAIN, "model": "llama2-7b"},
                                                     "parallelism": {"pp": 3}}, gpus=24))
    t = pipeline.size(loaded).training[0]
    assert any("splits 32 layers unevenly (11 on the busiest stage, 10 on the last)" in n
               for n in t.notes)


def test_partial_nodes_are_accepted_and_rounded_up(tmp_path: Path) -> None:
    """The seed's 4-GPU XE9680 runs: sized on 4 GPUs, bought as one whole server."""
    loaded = pipeline.load_checked(write(tmp_path, {**TRAIN, "model": "llama2-7b",
                                                    "kind": "lora"}, gpus=4))
    r = pipeline.size(loaded)
    assert (r.gpus, r.nodes, r.training[0].gpus) == (4, 1, 4)
    assert any("round up to 1 server (8 GPUs, 4 idle)" in n for n in r.notes)


def test_nic_count_defaults_from_the_server(tmp_path: Path) -> None:
    """XE8640 has 4 NICs; DGX A100 runs 200 Gb/s HDR; a count the server lacks is refused."""
    loaded = pipeline.load_checked(write(tmp_path, TRAIN, server="xe8640"))
    assert loaded.spec.hardware.east_west_nics_per_node is None
    server, gpu = CATALOG.servers["xe8640"], CATALOG.gpus["h100-sxm-80gb"]
    assert node_from_server(server, gpu).nics == 4
    dgx = node_from_server(CATALOG.servers["dgx-a100"], CATALOG.gpus["a100-sxm-80gb"])
    assert (dgx.nics, dgx.nic_gbps) == (8, 200)
    p = only(tmp_path, TRAIN, server="xe8640", east_west_nics_per_node=8)
    assert p.path == "hardware.east_west_nics_per_node" and p.allowed == "4"


def test_l40s_has_no_nvlink_domain() -> None:
    node = node_from_server(CATALOG.servers["r760xa"], CATALOG.gpus["l40s-48gb"])
    assert node.nvlink_domain == 1
    bridged = node_from_server(CATALOG.servers["r760xa"], CATALOG.gpus["h100-pcie-80gb"])
    assert bridged.nvlink_domain == 2


SERVE = {"name": "s", "kind": "inference", "model": "deepseek-v3", "input_tokens": 1000,
         "output_tokens": 1000}
XE = {"server": "xe9680", "gpu": "h200-sxm-141gb"}


@pytest.mark.parametrize(("pins", "field", "message", "allowed", "hint"), [
    ({"tp": 3}, "tp", "tp=3 does not divide the model's 128 attention heads",
     "1, 2, 4, 8, 16, 32, 64", "did you mean tp: 2?"),
    ({"tp": 12}, "tp", "tp=12 does not divide the model's 128 attention heads",
     "1, 2, 4, 8, 16, 32, 64", "did you mean tp: 8?"),
    ({"pp": 100}, "pp", "pp=100 exceeds the model's 61 layers", "1 ... 61", None),
    ({"tp": 8, "ep": 6}, "ep", "ep=6 must divide the model's 256 experts and the replica's "
     "GPUs (tp x pp: 8, 16, 24, 32, 48, 64, 128)", "1, 2, 4, 8, 16, 32, 64, 128",
     "did you mean ep: 4?"),
    ({"tp": 4, "ep": 8}, "ep", "ep=8 must divide the model's 256 experts and the replica's "
     "GPUs (tp x pp: 4)", "1, 2, 4", "did you mean ep: 4?"),
])
def test_impossible_serving_pins_are_located_errors(
    tmp_path: Path, pins: dict[str, int], field: str, message: str, allowed: str,
    hint: str | None,
) -> None:
    """Before these checks, ep=6 reached an empty layout search (an internal error) and
    tp=3 sized a replica no engine can build (128 heads do not split 3 ways)."""
    p = only(tmp_path, {**SERVE, "parallelism": pins}, **XE)
    assert p.path == f"workloads[0].parallelism.{field}"
    assert (p.message, p.allowed, p.hint) == (message, allowed, hint)


def test_ep_on_a_dense_serving_model_is_refused(tmp_path: Path) -> None:
    p = only(tmp_path, {**SERVE, "model": "llama3.1-70b", "parallelism": {"ep": 2}}, **XE)
    assert p.message == "ep=2 needs a mixture-of-experts model; this model is dense"


@pytest.mark.parametrize("pins", [{"tp": 16}, {"tp": 8, "ep": 2}, {"ep": 16}])
def test_possible_serving_pins_are_sized_as_pinned(tmp_path: Path, pins: dict[str, int]) -> None:
    """Multi-node TP over whole servers (TP16 = 2 x 8), EP over part of a replica, and an
    EP wider than one server (which brings a second pipeline stage) all size."""
    loaded = pipeline.load_checked(write(tmp_path, {**SERVE, "parallelism": pins}, **XE))
    est = size(loaded.spec, CATALOG).inference[0]
    assert est.fits
    assert all(getattr(est, k) == v for k, v in pins.items())
    assert (est.tp * est.pp) % est.ep == 0


def test_a_repeated_workload_name_is_located_at_the_repeat(tmp_path: Path) -> None:
    doc = {"name": "p", "hardware": {"server": "xe9680", "gpu": "h100-sxm-80gb"},
           "workloads": [TRAIN, {**TRAIN, "steps": 20}]}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    with pytest.raises(PodplanError) as err:
        pipeline.load_checked(str(path))
    (p,) = err.value.problems
    first = yaml.safe_dump(doc, sort_keys=False).splitlines().index("- name: t") + 1
    assert p.path == "workloads[1].name" and p.line is not None and p.line > first
    assert p.message == f"workload name 't' is already used by workloads[0] (line {first})"


def test_a_misspelt_key_suggests_the_required_field_it_lacks(tmp_path: Path) -> None:
    """'heads' on an inline model: attention_heads is required and missing, kv_heads is
    optional; the hint names the one the spec lacks."""
    model = {"name": "m", "layers": 32, "hidden_size": 4096, "heads": 32, "vocab_size": 32000}
    found = problems(tmp_path, {**TRAIN, "model": model}, server="xe9680", gpu="h100-sxm-80gb")
    unknown = next(p for p in found if p.path == "workloads[0].model.heads")
    assert unknown.hint == "did you mean 'attention_heads'?"

"""When no layout meets the latency SLOs: how close the hardware gets, and which change
(fp8 weights, another GPU the server takes) would meet them, each sized like a spec."""

from __future__ import annotations

import re
from typing import Any

from generator.catalog.load import default_catalog
from generator.sizing import size
from generator.spec.models import Spec

CATALOG = default_catalog()


def _serve_405b(**workload: Any) -> Spec:
    base = {"name": "chat", "kind": "inference", "model": "llama3.1-405b",
            "precision": "bf16", "input_tokens": 2000, "output_tokens": 500,
            "requests_per_minute": 300}
    return Spec.model_validate({
        "name": "t", "hardware": {"server": "xe9680", "gpu": workload.pop("gpu", "h100-sxm-80gb")},
        "workloads": [base | workload]})


def test_a_missed_slo_says_how_close_and_what_would_meet_it_sized() -> None:
    """405B in bf16 on H100 (TP8 PP2) asked for a TPOT 5 % under its own batch-1 floor:
    missed, the note quotes that floor, and every alternative it names, sized as a spec
    of its own, meets the SLO on exactly the GPUs the note says."""
    floor = size(_serve_405b(), CATALOG).inference[0].operating_points[1].tpot_ms
    tpot = round(0.95 * floor, 1)
    est = size(_serve_405b(tpot_ms=tpot), CATALOG).inference[0]
    assert est.meets_slo is False
    text = " ".join(est.notes)
    assert f"TPOT <= {tpot:g} ms" in text
    assert f"lowest this layout reaches is TPOT {est.operating_points[1].tpot_ms:.1f} ms" in text
    named = re.findall(r"(precision fp8|gpu [a-z0-9-]+) \((\d+) x [^=]+= (\d+) GPUs", text)
    assert named and named[0][0] == "precision fp8"  # fp8 halves the bytes each step reads
    for change, _, gpus in named:
        key, value = change.split(" ")
        alt = size(_serve_405b(tpot_ms=tpot, **{key: value}), CATALOG).inference[0]
        assert alt.meets_slo is True and alt.gpus == int(gpus), change


def test_an_slo_nothing_can_meet_says_what_was_tried() -> None:
    est = size(_serve_405b(tpot_ms=1), CATALOG).inference[0]
    assert est.meets_slo is False
    assert ("no change podplan can size meets them either (tried precision fp8, "
            "gpu h200-sxm-141gb, gpu a100-sxm-80gb)") in est.notes


def test_a_met_slo_adds_no_advice() -> None:
    est = size(_serve_405b(precision="fp8", tpot_ms=200), CATALOG).inference[0]
    assert est.meets_slo is True
    assert not any("SLO" in n or "would meet" in n for n in est.notes)


def test_a_narrow_layout_that_misses_says_a_wider_tp_gets_closer() -> None:
    """70B bf16 at 32k inputs, TPOT 10 ms: the fewest-GPU layout (TP2) reaches TPOT 40 ms
    and the note said 'the closest it gets', though TP8 reaches 19 ms."""
    spec = Spec.model_validate({"name": "t", "hardware": {"gpu": "h100-sxm-80gb"}, "workloads": [
        {"name": "c", "kind": "inference", "model": "llama3.1-70b", "precision": "bf16",
         "input_tokens": 32000, "output_tokens": 2000, "requests_per_minute": 100,
         "ttft_ms": 200, "tpot_ms": 10}]})
    est = size(spec, CATALOG).inference[0]
    assert est.meets_slo is False and est.tp < 8
    (note,) = [n for n in est.notes if n.startswith("no batch meets")]
    assert note.endswith("; a wider tp (up to 8, pinned with parallelism.tp) can get closer "
                         "on more GPUs")
    wide = Spec.model_validate(spec.model_dump(mode="json") | {"workloads": [
        spec.workloads[0].model_dump(mode="json") | {"parallelism": {"tp": 8}}]})
    assert size(wide, CATALOG).inference[0].operating_points[1].tpot_ms < (
        est.operating_points[1].tpot_ms)

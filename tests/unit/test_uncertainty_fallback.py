"""The all-rows band an estimate outside every calibrated regime falls back to."""

from __future__ import annotations

from generator.sizing.uncertainty import Regime, from_mapping, outside_note

DOC = {
    "min_similar": 3,
    "regimes": [],
    "all_rows": {
        "full sequences": {"stage": "dense", "rows": 125, "low_pct": -12.0, "high_pct": 9.0},
        "short samples": {"stage": "dense", "rows": 19, "low_pct": -5.0, "high_pct": 685.1},
        "moe": {"stage": "moe", "rows": 24, "low_pct": -18.8, "high_pct": 31.8},
        "inference": {"stage": "inference", "rows": 71, "low_pct": -30.2, "high_pct": 23.9},
    },
}


def test_dense_serving_and_moe_estimates_each_fall_back_to_their_own_stage() -> None:
    """Serving rows are full sequences too: keyed by data class alone, the serving band
    overwrote dense training's, so an uncalibrated dense pretraining estimate (NeMo on H200)
    was given the spread of 64 serving measurements and called it 'full sequences'."""
    table = from_mapping(DOC)
    dense = Regime.of("nemo", "pretrain", 32, "h200-sxm-141gb")
    serving = Regime.of("vllm", "inference", 8, "h100-sxm-80gb")
    moe = Regime.of("nemo", "pretrain", 64, "h100-sxm-80gb", moe=True)
    assert (table.band(dense).low_pct, table.band(dense).similar) == (-12.0, 125)
    assert (table.band(serving).low_pct, table.band(serving).similar) == (-30.2, 71)
    assert (table.band(moe).low_pct, table.band(moe).similar) == (-18.8, 24)
    assert not table.band(dense).calibrated
    assert outside_note(dense).endswith(
        "errors on dense training (full sequences)")
    assert outside_note(serving).endswith("errors on serving")
    assert outside_note(moe).endswith("errors on MoE training")

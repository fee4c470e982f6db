"""The seed document's rules of thumb, evaluated as written."""

from __future__ import annotations

import pytest

from generator.sizing.seed import inference_seed, training_gpu_hours, training_seed


def test_13_3_rule() -> None:
    """1B params x 1B tokens = 13.3 A100-hours: 6e18 FLOPs at ~40 % of 312 TFLOP/s."""
    assert training_gpu_hours(1e9, 1e9) == pytest.approx(13.3)
    assert pytest.approx(13.3, rel=0.01) == 6e18 / (0.4 * 312e12) / 3600


def test_training_seed_gpus_and_hours() -> None:
    s = training_seed(tokens=2e12, params=7e9, gpus=512, deadline_hours=720)
    assert s.gpus == pytest.approx(2000 * 7 * 13.3 / 720)
    assert s.hours == pytest.approx(2000 * 7 * 13.3 / 512)
    assert "A100" in s.note


def test_inference_seed() -> None:
    """gpus = output_tokens / throughput x qpm / 60."""
    s = inference_seed(output_tokens=1000, requests_per_minute=600, tokens_per_s_per_gpu=2500)
    assert s.gpus == pytest.approx(1000 / 2500 * 600 / 60)
    assert inference_seed(1000, None, 2500).gpus is None


def test_training_seed_counts_a_mixture_of_experts_by_its_active_params() -> None:
    """6*P*D with P = the weights each token computes with: DeepSeek-V3's 37.6 B, not 671 B."""
    s = training_seed(tokens=1e12, params=37.55e9, gpus=512, deadline_hours=720,
                      total_params=671.03e9)
    assert s.hours == pytest.approx(1e3 * 37.55 * 13.3 / 512)
    assert "MoE: 37.5 B active of 671.0 B params" in s.note
    dense = training_seed(tokens=1e12, params=7e9, gpus=512, deadline_hours=720, total_params=7e9)
    assert "MoE" not in dense.note

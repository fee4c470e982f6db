"""SLOs that read like a unit slip get a warning saying what was read and what was probably
meant (size notes, plan warnings), before the missed-SLO advice; real SLOs get none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.catalog.load import default_catalog
from generator.sizing import size
from generator.spec.checks.plausible import slo_unit_notes
from generator.spec.models import InferenceWorkload, Spec


def _w(**slo: Any) -> InferenceWorkload:
    return InferenceWorkload.model_validate(
        {"name": "chat", "kind": "inference", "model": "llama3.1-70b", "precision": "fp8",
         "input_tokens": 1000, "output_tokens": 1000, **slo})


@pytest.mark.parametrize(("slo", "note"), [
    ({"tpot_ms": 0.04}, "chat.tpot_ms: 0.04 reads as 0.04 ms per output token (25,000 tokens/s "
     "for one request), faster than any GPU decodes (no step of any model is under 1 ms); if "
     "seconds were meant, that is tpot_ms: 40"),
    ({"ttft_ms": 0.5}, "chat.ttft_ms: 0.5 reads as 0.5 ms to the first token, less than one "
     "forward pass takes (none is under 1 ms); if seconds were meant, that is ttft_ms: 500"),
    ({"tpot_ms": 40000}, "chat.tpot_ms: 40000 reads as 40 s per output token, slower than "
     "anyone reads; if microseconds were meant, that is tpot_ms: 40"),
    ({"ttft_ms": 2_000_000}, "chat.ttft_ms: 2e+06 reads as 33 minutes to the first token; if "
     "microseconds were meant, that is ttft_ms: 2000"),
    ({"ttft_ms": 40, "tpot_ms": 2000}, "chat.tpot_ms: 2000 reads as 2 s per output token, "
     "slower than anyone reads; if microseconds were meant, that is tpot_ms: 2"),
    ({"ttft_ms": 20, "tpot_ms": 50}, "chat: ttft_ms 20 is below tpot_ms 50, but the first "
     "token takes at least one decode step; were the two swapped?"),
])
def test_a_unit_slip_is_said_with_what_was_meant(slo: dict[str, float], note: str) -> None:
    assert slo_unit_notes(_w(**slo)) == [note]


@pytest.mark.parametrize("slo", [{}, {"tpot_ms": 1}, {"tpot_ms": 1000}, {"ttft_ms": 1},
                                 {"ttft_ms": 600_000}, {"ttft_ms": 2000, "tpot_ms": 50},
                                 {"ttft_ms": 50, "tpot_ms": 50}])
def test_real_slos_get_no_warning(slo: dict[str, float]) -> None:
    assert slo_unit_notes(_w(**slo)) == []


def test_size_and_plan_say_it_before_the_missed_slo(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\nworkloads:\n  - {name: chat, kind: inference, model: llama3.1-70b,"
                    " precision: fp8, input_tokens: 1000, output_tokens: 1000,"
                    " requests_per_minute: 60, tpot_ms: 0.04}\nhardware: {gpu: h100-sxm-80gb}\n")
    loaded = pipeline.load_checked(str(spec), default_catalog())
    est = size(Spec.model_validate(loaded.spec.model_dump()), default_catalog()).inference[0]
    assert est.notes[0].startswith("chat.tpot_ms: 0.04 reads as 0.04 ms")
    assert est.notes[1].startswith("the latency SLOs (TPOT <= 0.04 ms) are out of reach")
    warnings = pipeline.context_warnings(loaded, default_catalog())
    assert warnings == [est.notes[0]]

"""Latency SLOs that read like a unit slip: warnings, not errors.

``tpot_ms: 0.04`` (40 ms typed in seconds) is a valid number, so it sized, missed and got the
missed-SLO advice, which sent the reader after fp8 and faster GPUs instead of the typo. A
value beyond what any engine does on any GPU is said as what was read and what was probably
meant. The bounds sit outside every real SLO: the fastest batch-1 decode step podplan's
serving model gives for any catalog model on any GPU the XE9680 takes is 1.4 ms a token
(gpt-oss-20b, fp8, one H200), and a first token takes at least one such step, so neither can
be under 1 ms; more than a second per output token is slower than anyone reads (a batch job
sets no TPOT), and ten minutes to a first token is no interactive SLO. Values the spec's
limits refuse (<= 0) stay errors.
"""

from __future__ import annotations

from generator.spec.models import InferenceWorkload

TPOT_FLOOR_MS = 1.0
"""Below this no GPU decodes a token (module docstring)."""
TTFT_FLOOR_MS = 1.0
"""Below this no engine returns a first token (module docstring)."""
TPOT_CEILING_MS = 1_000.0
TTFT_CEILING_MS = 600_000.0
"""Ten minutes to the first token."""


def _tpot(name: str, v: float) -> str | None:
    if v < TPOT_FLOOR_MS:
        return (f"{name}.tpot_ms: {v:g} reads as {v:g} ms per output token "
                f"({1000 / v:,.0f} tokens/s for one request), faster than any GPU decodes "
                f"(no step of any model is under {TPOT_FLOOR_MS:g} ms); if seconds were "
                f"meant, that is tpot_ms: {v * 1000:g}")
    if v > TPOT_CEILING_MS:
        return (f"{name}.tpot_ms: {v:g} reads as {v / 1000:g} s per output token, slower "
                f"than anyone reads; if microseconds were meant, that is tpot_ms: "
                f"{v / 1000:g}")
    return None


def _ttft(name: str, v: float) -> str | None:
    if v < TTFT_FLOOR_MS:
        return (f"{name}.ttft_ms: {v:g} reads as {v:g} ms to the first token, less than one "
                f"forward pass takes (none is under {TTFT_FLOOR_MS:g} ms); if seconds were "
                f"meant, that is ttft_ms: {v * 1000:g}")
    if v > TTFT_CEILING_MS:
        return (f"{name}.ttft_ms: {v:g} reads as {v / 60_000:,.0f} minutes to the first "
                f"token; if microseconds were meant, that is ttft_ms: {v / 1000:g}")
    return None


def slo_unit_notes(w: InferenceWorkload) -> list[str]:
    """One warning per SLO value that reads like a unit slip, and one for swapped SLOs (a
    first token takes at least one decode step, so TTFT below TPOT cannot be met)."""
    notes = [n for n in (None if w.tpot_ms is None else _tpot(w.name, w.tpot_ms),
                         None if w.ttft_ms is None else _ttft(w.name, w.ttft_ms)) if n]
    if not notes and w.tpot_ms is not None and w.ttft_ms is not None and w.ttft_ms < w.tpot_ms:
        notes.append(f"{w.name}: ttft_ms {w.ttft_ms:g} is below tpot_ms {w.tpot_ms:g}, but the "
                     "first token takes at least one decode step; were the two swapped?")
    return notes

"""Which calibration rows a newer measurement of the same training job supersedes.

Some publications re-measure the same job with each software release and keep the old
figures beside the new ones (Megatron-Bridge's performance summary prints one table per
NeMo container). The releases disagree far beyond run-to-run noise for the same model on
the same GPUs (Qwen3-30B-A3B on 8 B200: 9,299 tokens/s/GPU with the 25.11 container,
27,136 with 26.04.01; 5,275 vs 9,058 on 16 H100), and the publisher retunes the layout
with each release. No hardware model can tell two containers apart, and a user sizing a
cluster today runs today's release, so the rule is:

    Of the rows of one publication that measure the same training job (model, GPU, GPU
    count, GEMM precision, sequence length), only those of the newest software release
    are scored. The older rows stay in the file and are printed as superseded, with
    their error, but they are neither fitted nor scored.

The release is the container the row's ``framework`` column names (``NeMo 26.04.01
container``); rows that name none are never superseded. The rule is applied by these
fields alone, never by row id; it only concerns training rows (a serving job is keyed by
more than this: input and output lengths, concurrency, engine).
"""

from __future__ import annotations

import re

RELEASE = re.compile(r"\b(\d{2}\.\d{2}(?:\.\d+)?)\s+container\b", re.IGNORECASE)


def release_of(row: dict[str, str]) -> tuple[int, ...] | None:
    """The software release (container version) the row ran, as a sortable tuple."""
    m = RELEASE.search(row["framework"])
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def job_key(row: dict[str, str], source: str) -> tuple[str, ...]:
    """The training job a row measures, within its publication ``source``."""
    gpu = row["gpu"].split()[0].upper()
    precision = row["precision"].split()[0].upper() if row["precision"].strip() else ""
    return (source, row["model"].strip().lower(), gpu, row["num_gpus"].strip(), precision,
            row["seq_len"].strip())


def superseded(rows: list[dict[str, str]], source_of: dict[str, str]) -> dict[str, str]:
    """Row id -> id of the newest-release row of the same job, for every training row an
    identical job from a newer release of the same publication supersedes.
    ``source_of``: row id -> normalised publication."""
    newest: dict[tuple[str, ...], tuple[tuple[int, ...], str]] = {}
    for row in rows:
        release = release_of(row)
        if release is None:
            continue
        key = job_key(row, source_of[row["id"]])
        if key not in newest or release > newest[key][0]:
            newest[key] = (release, row["id"])
    out: dict[str, str] = {}
    for row in rows:
        release = release_of(row)
        if release is None:
            continue
        best_release, best_id = newest[job_key(row, source_of[row["id"]])]
        if release < best_release:
            out[row["id"]] = best_id
    return out

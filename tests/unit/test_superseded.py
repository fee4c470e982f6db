"""The superseded-row rule (benchmarks/superseded.py): within one publication, the newest
software release of the same training job is scored; older releases of it are kept, printed
and not scored. Checked on hand-made rows, then on the calibration file."""

from __future__ import annotations

from benchmarks.calibration import is_inference, load_rows, superseded_rows
from benchmarks.superseded import release_of, superseded


def row(rid: str, release: str | None, gpus: str = "16", model: str = "Qwen3 30B-A3B",
        precision: str = "FP8 (current scaling)", gpu: str = "H100 SXM 80GB") -> dict[str, str]:
    framework = "Megatron-Bridge" + (f", NeMo {release} container" if release else "")
    return {"id": rid, "framework": framework, "gpu": gpu, "num_gpus": gpus, "model": model,
            "precision": precision, "seq_len": "4096"}


def test_release_is_read_from_the_container_name() -> None:
    assert release_of(row("a", "26.04.01")) == (26, 4, 1)
    assert release_of(row("a", "25.11")) == (25, 11)
    assert release_of(row("a", None)) is None
    assert (25, 11) < (26, 2) < (26, 2, 1) < (26, 4, 1)


def test_only_older_releases_of_the_same_job_are_superseded() -> None:
    rows = [row("old", "25.11"), row("mid", "26.02.01"), row("new", "26.06"),
            row("other-gpus", "25.11", gpus="64"),           # another job: kept
            row("other-gpu", "25.11", gpu="B200 180GB"),     # another job: kept
            row("bf16", "25.11", precision="BF16"),          # another job: kept
            row("no-release", None)]                         # never superseded
    same = {r["id"]: "pub" for r in rows}
    assert superseded(rows, same) == {"old": "new", "mid": "new"}
    other = {**same, "new": "another publication"}
    assert superseded(rows, other) == {"old": "mid"}


def test_calibration_rows_the_rule_supersedes() -> None:
    """Megatron-Bridge's 25.11 (and 26.02.01) tables repeat jobs its newer tables publish:
    those rows, and no dense or inference row."""
    by_id = {r["id"]: r for r in load_rows()}
    gone = superseded_rows()
    assert set(gone) == {"M2", "M4", "M5", "M7", "M10", "M12", "M14"}
    assert gone["M14"] == "M13" and gone["M5"] == "M3"
    assert all(by_id[i]["category"].startswith("moe-pretrain") for i in gone)
    assert not any(is_inference(by_id[i]) for i in gone)

"""``podplan size --json`` and ``podplan plan`` report the same wall-clock: one function
computes it, from the same storage plan's checkpoint bandwidth, and the deadline is judged
on it in both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import cli
from generator.sizing.result import json_number as sig

SPEC = {
    "name": "agree",
    "workloads": [
        {"name": "pre", "kind": "pretrain", "model": "llama2-7b", "tokens": 2e10,
         "deadline_hours": 30, "evaluation": {"every_samples": 100000, "samples": 5000}},
        {"name": "ft", "kind": "lora", "model": "llama2-70b", "framework": "hf",
         "dataset": {"samples": 50000, "avg_tokens_per_sample": 600, "epochs": 2}},
    ],
    "hardware": {"gpus": 12},
    "storage": {"checkpoint_write_seconds": 600},
}


def test_size_json_equals_plan_yaml(tmp_path: Path) -> None:
    path = tmp_path / "agree.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    runner = CliRunner()
    sized = runner.invoke(cli, ["size", "--json", str(path)])
    assert sized.exit_code == 0, sized.output
    doc = json.loads(sized.output)
    planned = runner.invoke(cli, ["plan", str(path), "--out", str(tmp_path / "out")])
    assert planned.exit_code == 0, planned.output
    plan = yaml.safe_load((tmp_path / "out/reports/agree/plan.yaml").read_text())
    by_name = {t["name"]: t for t in plan["sizing"]["training"]}
    total = 0.0
    for w in doc["workloads"]:
        t = by_name[w["name"]]
        assert w["wall_clock_hours"] == sig(t["wall_clock_hours"])
        assert w["time_breakdown_hours"] == {
            "compute": sig(t["time_hours"]), "evaluation": sig(t["evaluation_hours"]),
            "checkpoint": sig(t["checkpoint_hours"]), "failures": sig(t["failure_hours"])}
        assert w["meets_deadline"] == t["meets_deadline"]
        assert t["checkpoint_hours"] > 0  # the storage plan's bandwidth was used
        total += t["wall_clock_hours"]
    assert plan["reliability"]["wallclock_hours"] == pytest.approx(total, abs=1e-3)
    # the sizing ran on 12 GPUs; the plan bought whole servers and said so
    assert doc["gpus"] == 12 and doc["nodes"] == 2
    assert any("round up to 2 servers" in n for n in plan["sizing"]["notes"])

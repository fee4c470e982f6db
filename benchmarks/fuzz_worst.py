"""The largest specs the limits accept, timed through the real ``podplan`` command.

``python -m benchmarks.fuzz --worst``: each spec sits at (or next to) one of the bounds of
``generator.spec.limits``; ``podplan size`` and ``podplan plan`` run as subprocesses, so the
times include start-up, as a user sees them. Target: every one well under 10 s on the 2-core
CI machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 10.0

_NET = ("network: {oob_cidr: 10.0.0.0/14, mgmt_cidr: 10.4.0.0/14, frontend_cidr: 10.8.0.0/14,"
        " fabric_cidr: 10.64.0.0/10}\n")
_PRETRAIN = ("  - {name: pretrain, kind: pretrain, model: llama3.1-405b, framework: megatron,"
             " sequence_length: 8192, global_batch_size: 2048, tokens: 1.5e13}\n")


def _spec(name: str, workloads: str, extra: str = "") -> str:
    return f"name: {name}\nworkloads:\n{workloads}{extra}{_NET}"


def _many_workloads() -> str:
    rows = []
    for i in range(16):
        if i % 2:
            rows.append(f"  - {{name: chat{i}, kind: inference, model: llama3.1-70b, "
                        f"input_tokens: 1000, output_tokens: 1000, requests_per_minute: 2000, "
                        f"ttft_ms: 2000, tpot_ms: 50}}\n")
        else:
            rows.append(f"  - {{name: train{i}, kind: pretrain, model: llama3.1-70b, "
                        f"tokens: 1e12, deadline_hours: 0.01}}\n")
    return "".join(rows)


_INLINE = ("  - name: huge\n    kind: pretrain\n    tokens: 1e15\n    sequence_length: 1048576\n"
           "    global_batch_size: 1048576\n    model: {name: huge, layers: 1024, hidden_size:"
           " 262144, attention_heads: 4096, kv_heads: 4096, ffn_hidden_size: 1048576,"
           " vocab_size: 4194304, experts: 4096, top_k: 4096}\n")

WORST: dict[str, str] = {
    "32,768 GPUs, 8 NICs (GPU limit)": _spec(
        "max-gpus", _PRETRAIN, "hardware: {gpus: 32768}\nstorage: {dataset_tb: 1000}\n"),
    "32,768 GPUs, 4 NICs": _spec(
        "max-gpus-4nic", _PRETRAIN, "hardware: {gpus: 32768, east_west_nics_per_node: 4}\n"),
    "+ 512 spares + 3,584 growth nodes": _spec(
        "max-nodes", _PRETRAIN,
        "hardware: {gpus: 32768, hot_spares: 512}\nfabric: {growth_nodes: 3584}\n"),
    "16,384 L40S on R760xa (node limit)": _spec(
        "max-l40s", "  - {name: chat, kind: inference, model: llama3.1-70b, input_tokens: 1000,"
        " output_tokens: 1000}\n",
        "hardware: {server: r760xa, gpu: l40s-48gb, east_west_nics_per_node: 4, gpus: 16384}\n"),
"free sizing, 36 s deadline": _spec(
        "deadline", "  - {name: p, kind: pretrain, model: llama3.1-405b, tokens: 1e15,"
        " deadline_hours: 0.01}\n"),
    "16 workloads (workload limit)": _spec("many", _many_workloads()),
    "largest inline model, 1M sequence": _spec("inline", _INLINE, "hardware: {gpus: 32768}\n"),
    "inference at 1e8 requests/min": _spec(
        "rpm", "  - {name: chat, kind: inference, model: llama3.1-8b, input_tokens: 1,"
        " output_tokens: 1, requests_per_minute: 1e8}\n"),
}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _time(args: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s, exit code, last stderr line) of one ``podplan`` run."""
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return time.perf_counter() - start, _cpu() - cpu, done.returncode, last


def main() -> int:
    podplan = [sys.executable, "-c", "from generator.cli import main; main()"]
    rows, worst = [], 0.0
    with tempfile.TemporaryDirectory(prefix="podplan-worst-") as tmp:
        for label, text in WORST.items():
            spec = Path(tmp) / "spec.yaml"
            spec.write_text(text, encoding="utf-8")
            size_s, size_cpu, size_rc, size_err = _time([*podplan, "size", str(spec)])
            plan_s, plan_cpu, plan_rc, plan_err = _time(
                [*podplan, "-q", "plan", str(spec), "--out", str(Path(tmp) / "out")])
            worst = max(worst, size_s, plan_s)
            note = size_err if size_rc else plan_err if plan_rc else ""
            rows.append(f"{label:<38}{size_s:>6.2f} {size_cpu:>6.2f}{size_rc:>4}"
                        f"{plan_s:>8.2f} {plan_cpu:>6.2f}{plan_rc:>4}  {note[:50]}")
    print(f"{'spec at the limit':<38}{'size: wall':>11}{'cpu':>5}{'rc':>4}"
          f"{'plan: wall':>11}{'cpu':>5}{'rc':>4}")
    print("\n".join(rows))
    load = os.getloadavg()[0]
    print(f"\nslowest: {worst:.2f} s wall (target < {TARGET_S:.0f} s); load average {load:.1f} "
          "(wall time on a shared machine includes waiting for the CPU)")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

"""STUB nccl-tests for the lab (see ../stubcommon.py): every rank checks its job (a rank
per -g GPUs, all GPUs granted); rank 0 prints the report of the collective the program
is named after, slower when the lab's slow port is in the job."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stubcommon import (
    CLUSTER,
    die,
    granted_gpus,
    job_hosts,
    slow_port,
    toolformats,
)


def gpus_per_rank(args: list[str]) -> int:
    """nccl-tests' -g (GPUs driven by each rank, default 1)."""
    for i, arg in enumerate(args):
        if arg in ("-g", "--ngpus") and i + 1 < len(args):
            return int(args[i + 1])
    return 1


def main(op: str) -> None:
    gpn = int(CLUSTER["gpus_per_node"])
    per_rank = gpus_per_rank(sys.argv[1:])
    hosts = job_hosts()
    ntasks = int(os.environ.get("SLURM_NTASKS", "0"))
    if granted_gpus() != gpn:
        die(f"Invalid number of GPUs: {gpn} requested but only {granted_gpus()} were found.")
    if ntasks * per_rank != len(hosts) * gpn:
        die(f"stub {op}_perf: {ntasks} ranks of {per_rank} GPU(s) for {len(hosts)} nodes"
            f" of {gpn} GPUs")
    if os.environ.get("SLURM_PROCID") != "0":
        return
    slow = slow_port()[0] in hosts and len(hosts) > 1
    if len(hosts) > 1 and os.environ.get("NCCL_ALGO", "").lower() != "ring":
        die(f"stub {op}_perf: NCCL_ALGO=Ring did not reach the ranks of a multi-node run")
    sys.stdout.write(toolformats.nccl_report(op, hosts, gpn,
                                             toolformats.measured_busbw(op, len(hosts), slow),
                                             gpus_per_rank=per_rank))

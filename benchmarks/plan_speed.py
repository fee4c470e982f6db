"""How fast ``podplan plan`` is: in one process, and as the command a user runs.

The command is timed in a new process (interpreter start and imports included) in CPU
seconds, user + system of the child, the median of ``RUNS``: the machine has 2 cores shared
with other jobs, so wall time measures the neighbours. System time is mostly the kernel
creating the 2,000+ inventory files, which a shared disk makes vary several-fold; the rows
show it apart. Children may cache bytecode (``child_env``), as an installed podplan does.
Target: < 2 s at 2,048 nodes.

``python -m benchmarks.plan_speed [--nodes 64,512,2048] [--runs 5]`` prints the command's CPU
time at each size (a Llama 3 70B pretraining spec with only ``hardware.gpus`` changed) and
what its imports cost; ``python -m benchmarks.speed`` adds the in-process rows, the re-run
against the plan lock, ``--check`` and ``--diff`` (``plan_timings``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.speed import REPEAT, RUNS, Timing, format_timings

SIZES = (64, 512, 2048)
"""The node counts of ``python -m benchmarks.plan_speed``'s table."""

PLAN_NODES = (8, 128, 2048)
PLAN_TARGET_S = 2.0  # at 2,048 nodes
PLAN_SPEC = """\
name: bench-{nodes}
workloads:
  - name: pretrain
    kind: pretrain
    model: llama3-70b
    framework: megatron
    sequence_length: 8192
    global_batch_size: 1024
    tokens: 1.0e12
hardware: {{gpus: {gpus}}}
facility: {{rack_power_kw: 52}}
"""


def _bench_spec(nodes: int, workdir: Path) -> Path:
    spec = workdir / f"bench-{nodes}.yaml"
    spec.write_text(PLAN_SPEC.format(nodes=nodes, gpus=8 * nodes), encoding="utf-8")
    return spec


def plan_end_to_end(nodes: int, workdir: Path) -> tuple[float, float]:
    """(wall, CPU) seconds for what ``podplan plan`` does in-process: load, size, plan, BOM,
    every emitter, write."""
    from generator import pipeline
    from generator.render.update import apply, prepare

    spec = _bench_spec(nodes, workdir)
    out_dir = workdir / f"out-{nodes}"
    cpu, start = time.process_time(), time.perf_counter()
    out = pipeline.outputs(pipeline.load_checked(str(spec)))
    apply(prepare(out_dir, out.files, out.manifest))
    return time.perf_counter() - start, time.process_time() - cpu


def podplan_cli(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``podplan ARGS`` command, interpreter start and imports
    included (a child process; CPU = its user + system time)."""
    wall, user, system = podplan_cli_times(*args, ok=ok)
    return wall, user + system


def podplan_cli_times(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, float, float]:
    """(wall, user CPU, system CPU) seconds of one ``podplan ARGS`` command. System time is
    mostly the kernel creating and writing files, which a shared disk makes vary
    several-fold from run to run: the rows show it apart."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "from generator.cli import main; main()", *args],
                       check=False, stdout=subprocess.DEVNULL, env=child_env())
    wall = time.perf_counter() - start
    assert r.returncode in ok, f"podplan {' '.join(args)}: exit {r.returncode}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def child_env() -> dict[str, str]:
    """The environment of a timed child: this one, with bytecode caching allowed. An
    installed podplan has its modules compiled once; with ``PYTHONDONTWRITEBYTECODE`` set
    (as in some shells and CI images) every run would compile all of podplan again (~0.15 s
    of CPU), which is not what a user's command costs."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def warm() -> None:
    """Import the plan's modules once in a child, so their bytecode is cached before timing."""
    subprocess.run([sys.executable, "-c", "; ".join(PLAN_IMPORTS.values())], check=True,
                   env=child_env())


PLAN_IMPORTS = {
    "podplan's plan modules": "import generator.cli, generator.pipeline, generator.bom, "
    "generator.emit.report, generator.emit.reports, generator.emit.inventory, "
    "generator.emit.pulumi, generator.render.update",
}
"""What a ``plan`` process imports before it plans: the fixed part of the command's time."""


def import_timings() -> list[Timing]:
    """Each group of ``PLAN_IMPORTS`` in a new process (best of ``REPEAT``), so the command's
    row can be read as imports + the in-process plan + reading the plan lock."""
    rows = []
    for what, code in PLAN_IMPORTS.items():
        runs = []
        for _ in range(REPEAT):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=child_env())
            runs.append(time.perf_counter() - start)
        rows.append(Timing(f"import {what} (new process)", min(runs),
                           f"best of {REPEAT}; interpreter start included"))
    return rows


def plan_cli(nodes: int, workdir: Path, suffix: str = "") -> tuple[float, float, float]:
    """(wall, user, system) seconds of the ``podplan plan`` command writing ``nodes`` nodes
    into ``cli-<nodes><suffix>`` (a new directory, or the tree and plan lock a run left)."""
    spec = _bench_spec(nodes, workdir)
    return podplan_cli_times("plan", str(spec), "--out", str(workdir / f"cli-{nodes}{suffix}"))


VERSION_TARGET_S = 0.25
VERSION_RUNS = 10


def regeneration_timings(nodes: int, workdir: Path) -> list[Timing]:
    """``podplan --version`` (imports nothing heavy) and, on the tree ``plan_cli`` wrote,
    ``plan --check`` (up to date) and ``plan --diff`` against a spec with one more login
    node (every compute node's address moves without a plan lock)."""
    runs = [podplan_cli("--version") for _ in range(VERSION_RUNS)]
    rows = [Timing("podplan --version (new process)", min(runs)[0],
                   f"best of {VERSION_RUNS}; mean {sum(w for w, _ in runs) / len(runs):.3f} s; "
                   f"{min(runs)[1]:.3f} s CPU", VERSION_TARGET_S)]  # fmt: skip
    spec, out = _bench_spec(nodes, workdir), workdir / f"cli-{nodes}"
    grown = workdir / "grown.yaml"
    grown.write_text(spec.read_text(encoding="utf-8").replace("hardware: {", "hardware: "
                     "{login_nodes: 2, "), encoding="utf-8")  # fmt: skip
    for what, args, ok in (("plan --check (up to date)", (str(spec), "--check"), (0,)),
                           ("plan --diff (+1 login node)", (str(grown), "--diff"), (0,))):
        wall, cpu = min(podplan_cli("plan", *args, "--out", str(out), ok=ok)
                        for _ in range(REPEAT))
        rows.append(Timing(f"podplan {what}, {nodes:,} nodes", wall,
                           f"best of {REPEAT}; {cpu:.2f} s CPU (user + system)"))
    return rows


def _cli_row(what: str, runs: list[tuple[float, float, float]], target: float | None) -> Timing:
    cpus = sorted(u + s for _, u, s in runs)
    return Timing(what, statistics.median(cpus),
                  f"CPU s (user + system), median of {len(runs)} ({cpus[0]:.2f}-{cpus[-1]:.2f}; "
                  f"user median {statistics.median(u for _, u, _ in runs):.2f}, system "
                  f"{statistics.median(s for _, _, s in runs):.2f}; wall median "
                  f"{statistics.median(w for w, _, _ in runs):.2f} s)", target)


def plan_cli_timings(nodes: int, workdir: Path) -> list[Timing]:
    """``podplan plan`` as a command at ``nodes`` nodes, in CPU seconds (median of ``RUNS``,
    as the sweeps: the machine is shared), twice: into a new output directory, then re-run
    on that tree, which reads back its plan lock (``reports/<name>/plan.lock.yaml``: every
    device keeps its name, address, slot and cable) and finds every file up to date.
    The first is the target's row."""
    fresh = [plan_cli(nodes, workdir, f"-{k}" if k else "") for k in range(RUNS)]
    again = [plan_cli(nodes, workdir) for _ in range(RUNS)]
    return [
        _cli_row(f"podplan plan command (new process), {nodes:,} nodes", fresh, PLAN_TARGET_S),
        _cli_row(f"  the same, re-run against its plan lock, {nodes:,} nodes", again, None),
    ]


def plan_timings() -> list[Timing]:
    """``podplan plan`` in-process at 8, 128 and 2,048 nodes (best of three by wall time; its
    CPU time shows how much of the wall time was the machine's other load) and as a command
    at 2,048 (``plan_cli_timings``)."""
    rows = []
    warm()
    with tempfile.TemporaryDirectory() as tmp:
        plan_end_to_end(8, Path(tmp))  # warm the catalog and imports outside the timing
        for nodes in PLAN_NODES:
            wall, cpu = min(plan_end_to_end(nodes, Path(tmp)) for _ in range(REPEAT))
            target = PLAN_TARGET_S if nodes == max(PLAN_NODES) else None
            rows.append(
                Timing(
                    f"podplan plan end to end, {nodes:,} nodes",
                    wall,
                    f"best of {REPEAT}; {cpu:.2f} s CPU; {wall / nodes * 1000:.2f} ms per node",
                    target,
                )
            )
        nodes = max(PLAN_NODES)
        rows += plan_cli_timings(nodes, Path(tmp))
        rows += import_timings()
        rows += regeneration_timings(nodes, Path(tmp))
    return rows


def size_row(nodes: int, workdir: Path, runs: int = RUNS) -> str:
    """One line of the size table: the command's CPU time at ``nodes`` (median of ``runs``,
    each into a new output directory), user and system apart, and the range."""
    times = []
    for k in range(runs):
        times.append(plan_cli(nodes, workdir, f"-size{k}"))
        shutil.rmtree(workdir / f"cli-{nodes}-size{k}")  # 2,048 nodes write ~30 MB a run
    cpus = sorted(u + s for _, u, s in times)
    cpu = statistics.median(cpus)
    flag = "  MISSED" if nodes == max(PLAN_NODES) and cpu >= PLAN_TARGET_S else ""
    return (f"{nodes:>6,} {cpu:>8.2f} {statistics.median(u for _, u, _ in times):>6.2f} "
            f"{statistics.median(s for _, _, s in times):>6.2f} "
            f"{cpus[0]:>5.2f}-{cpus[-1]:<5.2f} {cpu / nodes * 1000:>8.2f}{flag}")


def size_table(sizes: tuple[int, ...] = SIZES, runs: int = RUNS) -> str:
    """``podplan plan`` as a command at each size, in CPU seconds."""
    head = f"{'nodes':>6} {'CPU s':>8} {'user':>6} {'system':>6} {'range':>11} {'ms/node':>8}"
    lines = [f"podplan plan command (new process), CPU s, median of {runs}", head,
             "-" * len(head)]
    warm()
    with tempfile.TemporaryDirectory() as tmp:
        lines += [size_row(n, Path(tmp), runs) for n in sizes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default=",".join(map(str, SIZES)), help="comma-separated")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs per size; median shown")
    args = parser.parse_args(argv)
    print(size_table(tuple(sorted(int(n) for n in args.nodes.split(","))), args.runs))
    print()
    print(format_timings(import_timings()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

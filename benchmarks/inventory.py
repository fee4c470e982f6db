"""How the generated inventory scales: ``ansible-inventory --list`` and ``podplan plan``.

The 2,048-node example (``examples/llama31-405b-2048.yaml``) is planned at 64 ... 2,048
nodes (only ``hardware.gpus`` changes). For each size: the ``podplan plan`` command in a new
process, then ``ansible-inventory --list`` on the inventory it wrote (wall and CPU time, the
JSON's size). Node lists in ``group_vars`` are hostlist expressions, so the JSON should grow
linearly in nodes: the 64 -> 2,048 ratios are printed next to the node ratio (32).

Targets: ``ansible-inventory --list`` < 15 s and ``podplan plan`` < 3 s (a new process), both
at 2,048 nodes; ``podplan --version`` < 0.25 s (a new process: the CLI imports lazily).
The machine is shared: the load average is printed before and after, and CPU time (user +
system of the child) next to wall time; each is the best of ``--repeat``.

``python -m benchmarks.inventory [--repeat N] [--nodes 64,2048]``
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "llama31-405b-2048.yaml"
NODES = (64, 256, 1024, 2048)
INVENTORY_TARGET_S = 15.0
PLAN_TARGET_S = 3.0
VERSION_TARGET_S = 0.25
VERSION_RUNS = 10
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class Run:
    """Wall and CPU seconds of one child process, and what it printed (bytes)."""

    wall: float
    cpu: float
    out_bytes: int


@dataclass(frozen=True)
class Row:
    nodes: int
    plan: Run
    inventory: Run
    group_vars_bytes: int
    host_vars_bytes: int


def run_child(argv: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``argv``; its wall time, CPU time (user + system) and stdout size."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        subprocess.run(argv, check=True, stdout=out, env=env)
        wall = time.perf_counter() - start
        size = out.tell()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, size)


def podplan_command() -> list[str]:
    """The installed ``podplan`` script beside this interpreter (what a user runs)."""
    script = Path(sys.executable).parent / "podplan"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from generator.cli import main; sys.exit(main())"]


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.wall)


def spec_for(nodes: int, workdir: Path) -> Path:
    """The 2,048-node example with ``nodes`` nodes (and a name that says so)."""
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["name"] = f"inventory-bench-{nodes}"
    data["hardware"]["gpus"] = nodes * GPUS_PER_NODE
    spec = workdir / f"inventory-bench-{nodes}.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return spec


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.yml") if p.is_file())


def measure(nodes: int, workdir: Path, repeat: int) -> Row:
    spec = spec_for(nodes, workdir)
    out = workdir / f"out-{nodes}"
    plan_argv = [*podplan_command(), "plan", str(spec), "--out", str(out)]
    plans = []
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        plans.append(run_child(plan_argv))
    inventory = out / "inventories" / f"inventory-bench-{nodes}"
    exe = shutil.which("ansible-inventory") or "ansible-inventory"
    # No inventory cache or plugin noise: what an admin's first command costs.
    env = {**os.environ, "ANSIBLE_INVENTORY_UNPARSED_WARNING": "1"}
    listing = [run_child([exe, "-i", str(inventory), "--list"], env) for _ in range(repeat)]
    return Row(
        nodes,
        best(plans),
        best(listing),
        _tree_bytes(inventory / "group_vars"),
        _tree_bytes(inventory / "host_vars"),
    )


def format_rows(rows: list[Row]) -> str:
    head = (
        f"{'nodes':>6} {'plan s':>7} {'plan CPU':>8} {'inv s':>7} {'inv CPU':>8} "
        f"{'JSON MB':>8} {'JSON B/node':>11} {'group_vars B':>12} {'host_vars B/node':>16}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.nodes:>6,} {r.plan.wall:>7.2f} {r.plan.cpu:>8.2f} {r.inventory.wall:>7.2f} "
            f"{r.inventory.cpu:>8.2f} {r.inventory.out_bytes / 1e6:>8.2f} "
            f"{r.inventory.out_bytes / r.nodes:>11,.0f} {r.group_vars_bytes:>12,} "
            f"{r.host_vars_bytes / r.nodes:>16,.0f}"
        )
    return "\n".join(lines)


def format_ratios(rows: list[Row]) -> str:
    small, large = rows[0], rows[-1]
    nodes = large.nodes / small.nodes
    size = large.inventory.out_bytes / small.inventory.out_bytes
    wall = large.inventory.wall / small.inventory.wall
    cpu = large.inventory.cpu / small.inventory.cpu
    return (
        f"{small.nodes} -> {large.nodes} nodes (x{nodes:g}): ansible-inventory JSON x{size:.1f}, "
        f"wall x{wall:.1f}, CPU x{cpu:.1f}; group_vars "
        f"{small.group_vars_bytes:,} -> {large.group_vars_bytes:,} bytes"
    )


def version_run() -> Run:
    """``podplan --version`` in a new process, best of ``VERSION_RUNS``: interpreter start
    plus the CLI's own imports, which must stay lazy."""
    return best([run_child([*podplan_command(), "--version"]) for _ in range(VERSION_RUNS)])


def verdicts(rows: list[Row], version: Run) -> list[tuple[str, float, float]]:
    """(what, seconds, target) for every target: the largest size's, and ``--version``."""
    top = rows[-1]
    return [
        (f"ansible-inventory --list at {top.nodes:,} nodes", top.inventory.wall,
         INVENTORY_TARGET_S),
        (f"podplan plan (new process) at {top.nodes:,} nodes", top.plan.wall, PLAN_TARGET_S),
        (f"podplan --version (new process, best of {VERSION_RUNS})", version.wall,
         VERSION_TARGET_S),
    ]  # fmt: skip


def format_verdict(what: str, wall: float, target: float) -> str:
    return f"{what}: {wall:.3f} s (target < {target:g} s)" + ("" if wall < target else "  MISSED")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per size; best is shown")
    parser.add_argument("--nodes", default=",".join(map(str, NODES)), help="comma-separated")
    args = parser.parse_args(argv)
    sizes = sorted(int(n) for n in args.nodes.split(","))
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="podplan-inventory-bench-") as tmp:
        rows = [measure(n, Path(tmp), args.repeat) for n in sizes]
    version = version_run()
    load_after = os.getloadavg()
    print(format_rows(rows))
    print()
    print(format_ratios(rows))
    checks = verdicts(rows, version)
    for check in checks:
        print(format_verdict(*check))
    print(
        f"load average (1, 5, 15 min) before {' '.join(f'{x:.2f}' for x in load_before)}, "
        f"after {' '.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} CPUs; "
        f"best of {args.repeat}"
    )
    return 0 if all(wall < target for _, wall, target in checks) else 1


if __name__ == "__main__":
    sys.exit(main())

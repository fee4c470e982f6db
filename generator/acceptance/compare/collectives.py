"""nccl-tests rungs (1, 2, N/2 and N nodes) and the optional training step.

Each nccl-tests row from ``compare_from_bytes`` up is compared with the model at that
size and node count (the node count the run really had: busy nodes make the ladder use
fewer). Wrong elements or out-of-bounds values fail the run whatever its speed. A slow
multi-node run is not pinned on a node by itself; its shortfall points at the nodes the
other rungs named, if any of them took part.
"""

from __future__ import annotations

from generator.acceptance.compare.base import Check, Shortfall, check, fmt
from generator.acceptance.results import NcclRun, Run
from generator.sizing.acceptance import AcceptanceModel

RUNG_NCCL = "nccl_tests"
RUNG_TRAIN = "train_step"


def _run_checks(r: NcclRun, model: AcceptanceModel, planned: list[str],
                ) -> tuple[list[Check], Shortfall | None]:
    rep = r.report
    hosts = rep.hosts or planned
    nodes = len(hosts) or r.nodes
    subject = f"{r.op} on {', '.join(hosts) if hosts else f'{r.nodes} nodes'}"
    top = max(model.data.listed_sizes_bytes)
    if not rep.rows:
        exp = model.nccl(r.op, nodes, top)
        why = "; ".join(i.text() for i in rep.issues)
        return [check(RUNG_NCCL, exp, subject, None, tuple(hosts), why)], \
            Shortfall(RUNG_NCCL, subject, f"nccl-tests did not finish: {why}")
    checks = [check(RUNG_NCCL, model.nccl(r.op, nodes, row.size), subject, row.busbw,
                    tuple(hosts), f"{r.file}:{row.line}")
              for row in rep.rows if row.size >= model.data.compare_from_bytes]
    wrong = sum((row.wrong or 0) + (row.wrong_in_place or 0) for row in rep.rows)
    if wrong or rep.out_of_bounds:
        exp = model.nccl(r.op, nodes, rep.rows[-1].size)
        checks.append(Check(RUNG_NCCL, exp, subject, None, "fail", tuple(hosts),
                            f"data errors: {wrong} wrong elements, out of bounds "
                            f"{rep.out_of_bounds or 0}"))
    expected_ranks = nodes * model.node.gpus
    if rep.ranks and len(rep.ranks) != expected_ranks:
        checks.append(Check(RUNG_NCCL, model.nccl(r.op, nodes, top), subject, None, "error",
                            tuple(hosts), f"{len(rep.ranks)} ranks, expected {expected_ranks}"))
    failed = [c for c in checks if c.status != "pass"]
    if not failed:
        return checks, None
    worst = min((c for c in failed if c.measured is not None),
                key=lambda c: c.measured / c.exp.expected if c.measured else 0.0, default=None)
    what = failed[0].detail if worst is None else (
        f"busbw {fmt(worst.measured or 0)} GB/s at {worst.exp.metric.split('@ ')[-1]}, "
        f"expected >= {fmt(worst.exp.limit)} ({fmt(worst.exp.expected)} - "
        f"{worst.exp.tolerance_pct:g} %)")
    return checks, Shortfall(RUNG_NCCL, subject, what)


def nccl(run: Run, model: AcceptanceModel, named: set[str]) -> tuple[list[Check],
                                                                      list[Shortfall]]:
    """Every nccl-tests run; ``named``: nodes other rungs pinned faults on."""
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    for r in sorted(run.nccl, key=lambda r: (r.nodes, r.op)):
        planned = run.nccl_nodes.get(r.nodes, [])
        c, s = _run_checks(r, model, planned)
        checks += c
        if s is not None:
            suspects = sorted(named & set(r.report.hosts or planned))
            hint = f"; includes {', '.join(suspects)}, named above" if suspects else ""
            shorts.append(Shortfall(s.rung, s.subject, s.what + hint))
    return checks, shorts


def train_step(run: Run, model: AcceptanceModel) -> tuple[list[Check], list[Shortfall]]:
    """The short training run against the sizing engine's step time on its GPU count."""
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    for t in run.train:
        gpus = t.nodes * model.node.gpus
        exp = model.train_step(gpus)
        if exp is None:
            continue
        why = "; ".join(i.text() for i in t.log.issues)
        c = check(RUNG_TRAIN, exp, f"{t.nodes} nodes", t.log.step_s, (), why or t.file)
        checks.append(c)
        if c.status != "pass":
            got = f"{fmt(t.log.step_s)} s" if t.log.step_s else "no step times"
            shorts.append(Shortfall(RUNG_TRAIN, f"{t.nodes} nodes", f"step time {got}, expected "
                                    f"<= {fmt(exp.limit)} s ({fmt(exp.expected)} s + "
                                    f"{exp.tolerance_pct:g} %)"))
    return checks, shorts


"""GPU rungs: ``nvidia-smi`` (count, settings, topology), ``dcgmi diag`` and STREAM triad.

Every failure here is pinned on one node, so its shortfall names the node to drain.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from generator.acceptance.compare.base import Check, Shortfall, check, fmt, gpu_list
from generator.acceptance.parse.nvsmi import SLOWDOWNS, GpuRow, Query, Topology
from generator.acceptance.results import Run
from generator.sizing.acceptance import AcceptanceModel, Expectation

RUNG_GPU = "gpu_health"
RUNG_DCGM = "dcgm_diag"
RUNG_HBM = "hbm_bandwidth"


def _cluster_max_clock(run: Run) -> float | None:
    clocks = [c for q in run.queries.values() for g in q.gpus
              if (c := g.num("clocks.max.sm")) is not None]
    return statistics.median(clocks) if clocks else None


def _gpu_values(g: GpuRow, median_clock: float | None) -> list[float | None]:
    """Measured values in the order of ``AcceptanceModel.gpu_checks``."""
    app, mx = g.num("clocks.applications.graphics"), g.num("clocks.max.sm")
    ecc = g.text("ecc.mode.current")
    slow = [g.text(f) for f in SLOWDOWNS if g.text(f) not in ("", "[N/A]", "[Not Supported]")]
    return [
        g.num("enforced.power.limit"),
        100 * app / mx if app is not None and mx else None,
        100 * mx / median_clock if mx is not None and median_clock else None,
        None if ecc in ("", "[N/A]", "[Not Supported]") else float(ecc == "Enabled"),
        g.num("ecc.errors.uncorrected.volatile.total"),
        float(sum(s == "Active" for s in slow)) if slow else None,
        g.num("pcie.link.width.current"),
    ]


def _why(exp: Expectation, g: GpuRow, value: float) -> str:
    m = exp.metric
    if m.startswith("application SM clock"):
        app, mx = g.text("clocks.applications.graphics"), g.text("clocks.max.sm")
        return f"application SM clock {fmt(value)} % of max ({app} of {mx} MHz)"
    if m.startswith("max SM clock"):
        return f"max SM clock {g.text('clocks.max.sm')} MHz, {fmt(value)} % of the cluster's"
    if m == "clock slowdown reasons active":
        active = [f.split(".")[-1] for f in SLOWDOWNS if g.text(f) == "Active"]
        return f"clock slowdown active: {', '.join(active)}"
    return f"{m} {fmt(value)} {exp.unit} (expected {exp.pass_if.replace('_', ' ')} " \
           f"{fmt(exp.limit)})"


def _query_checks(node: str, q: Query, model: AcceptanceModel, median: float | None,
                  ) -> tuple[list[Check], list[Shortfall]]:
    count = model.gpu_count()
    issues = "; ".join(i.text() for i in q.issues)
    if not q.readable:  # not a measurement: an error, nothing pinned on the node
        return [check(RUNG_GPU, count, node, None, (node,), issues)], []
    checks = [check(RUNG_GPU, count, node, float(len(q.gpus)), (node,), issues)]
    shorts = []
    if len(q.gpus) != int(count.expected):
        seen = gpu_list([g.index for g in q.gpus])
        said = f"; {q.issues[0].text()}" if not q.gpus and q.issues else ""
        shorts.append(Shortfall(RUNG_GPU, node, f"{len(q.gpus)} of {int(count.expected)} GPUs "
                                f"present (indices {seen or 'none'}{said})", (node,),
                                f"nvidia-smi: {len(q.gpus)} of {int(count.expected)} GPUs"))
    bad: dict[str, list[int]] = defaultdict(list)
    why: dict[str, str] = {}
    for g in q.gpus:
        for exp, value in zip(model.gpu_checks(), _gpu_values(g, median), strict=True):
            if value is None:
                continue
            c = check(RUNG_GPU, exp, f"{node} GPU{g.index}", value, (node,))
            checks.append(c)
            if c.status != "pass":
                bad[exp.metric].append(g.index)
                why.setdefault(exp.metric, _why(exp, g, value))
    shorts += [Shortfall(RUNG_GPU, node, f"GPU {gpu_list(idx)}: {why[m]}", (node,),
                         f"nvidia-smi GPU {gpu_list(idx)}: {why[m]}")
               for m, idx in bad.items()]
    return checks, shorts


def _topo_checks(node: str, t: Topology, model: AcceptanceModel, rails: list[str],
                 ) -> tuple[list[Check], list[Shortfall]]:
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    issues = "; ".join(i.text() for i in t.issues)
    if (exp := model.nvlinks()) is not None and len(t.gpus) > 1:
        pairs = [(a, b) for i, a in enumerate(t.gpus) for b in t.gpus[i + 1:]]
        low = [(a, b, t.nvlinks(a, b)) for a, b in pairs if t.nvlinks(a, b) != exp.expected]
        worst = min(t.nvlinks(a, b) for a, b in pairs)
        detail = ", ".join(f"{a}-{b} NV{n}" for a, b, n in low[:8])
        checks.append(check(RUNG_GPU, exp, node, float(worst), (node,), detail or issues))
        if low:
            shorts.append(Shortfall(RUNG_GPU, node, f"NVLinks below {int(exp.expected)} per "
                                    f"GPU pair: {detail}", (node,)))
    affine = [n for n in t.nics if any(t.links.get((g, n)) in ("PIX", "PXB") for g in t.gpus)]
    wanted = rails or affine
    exp = model.rail_affinity()
    good = [r for r in wanted if r in affine]
    checks.append(check(RUNG_GPU, exp, node, float(len(good)), (node,), issues))
    if len(good) != int(exp.expected):
        missing = [r for r in wanted if r not in affine]
        where = {r: sorted({t.links.get((g, r), "?") for g in t.gpus}) for r in missing}
        text = ", ".join(f"{r} ({'/'.join(w) if r in t.nics else 'not listed'})"
                         for r, w in where.items())
        shorts.append(Shortfall(RUNG_GPU, node, f"{len(good)} of {int(exp.expected)} rail "
                                f"NICs on a GPU's PCIe switch; not: {text or 'none listed'}",
                                (node,)))
    return checks, shorts


def gpu_health(run: Run, model: AcceptanceModel) -> tuple[list[Check], list[Shortfall]]:
    """``nvidia-smi`` query and topology of every node tested."""
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    median = _cluster_max_clock(run)
    for node in sorted(run.queries):
        c, s = _query_checks(node, run.queries[node], model, median)
        checks, shorts = checks + c, shorts + s
    for node in sorted(run.topos):
        c, s = _topo_checks(node, run.topos[node], model, run.rails)
        checks, shorts = checks + c, shorts + s
    return checks, shorts


def dcgm(run: Run, model: AcceptanceModel) -> tuple[list[Check], list[Shortfall]]:
    """``dcgmi diag -r 2``: every test passes on every node."""
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    exp = model.dcgm_diag()
    for node in sorted(run.diags):
        rep = run.diags[node]
        if not rep.results:
            checks.append(check(RUNG_DCGM, exp, node, None, (node,),
                                "; ".join(i.text() for i in rep.issues)))
            continue
        bad = rep.not_passed
        detail = "; ".join(f"{r.test}{'' if r.gpu is None else f' GPU{r.gpu}'}: {r.status}"
                           f"{' - ' + r.warnings[0] if r.warnings else ''}" for r in bad[:6])
        checks.append(check(RUNG_DCGM, exp, node, float(len(bad)), (node,), detail))
        if bad:
            shorts.append(Shortfall(RUNG_DCGM, node, f"dcgmi diag: {detail}", (node,),
                                    f"dcgmi diag -r 2: {bad[0].test} {bad[0].status}"))
    return checks, shorts


def hbm(run: Run, model: AcceptanceModel) -> tuple[list[Check], list[Shortfall]]:
    """STREAM triad per GPU (DCGM memory_bandwidth): the figure when DCGM prints one,
    DCGM's own verdict against its ``minimum_bandwidth`` otherwise."""
    checks: list[Check] = []
    shorts: list[Shortfall] = []
    exp = model.hbm()
    for node in sorted(run.membw):
        rep = run.membw[node]
        if not rep.results:
            checks.append(check(RUNG_HBM, exp, node, None, (node,),
                                "; ".join(i.text() for i in rep.issues)))
        for r in rep.results:
            subject = f"{node} GPU{r.gpu}" if r.gpu is not None else node
            bw = r.bandwidth_gbps()
            c = check(RUNG_HBM, exp, subject, bw, (node,)) if bw is not None else Check(
                RUNG_HBM, exp, subject, None, "pass" if r.passed else "fail", (node,),
                f"DCGM verdict {r.status} (no figure printed)")
            if bw is not None and not r.passed:
                c = Check(RUNG_HBM, exp, subject, bw, "fail", (node,), f"DCGM {r.status}")
            checks.append(c)
            if c.status != "pass":
                got = f"{fmt(bw)} GB/s" if bw is not None else f"DCGM {r.status}"
                shorts.append(Shortfall(RUNG_HBM, subject, f"memory bandwidth {got} (expected "
                                        f">= {fmt(exp.limit)} GB/s)", (node,),
                                        f"HBM {subject.split()[-1]} {got}"))
    return checks, shorts

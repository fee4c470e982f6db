"""InfiniBand rung: ``ib_write_bw`` on every rail, and which node or link is at fault.

The ladder tests each rail over a ring of node pairs (node i's client writes into node
i-1's server), so every node's port on a rail is measured twice, against two different
peers (N >= 3). A slow port, cable or transceiver slows both of its tests: a node whose
tests on a rail all fall short while other nodes on that rail pass is the one to fix and
drain. A single slow test with healthy ends elsewhere is a link between two named nodes;
with two nodes, or a rail slow everywhere (its leaf switch, the subnet manager's rate),
the fault cannot be pinned on a node and nothing is drained.
"""

from __future__ import annotations

from collections import defaultdict

from generator.acceptance.compare.base import Check, Shortfall, check, fmt
from generator.acceptance.results import IbTest, Run
from generator.sizing.acceptance import AcceptanceModel

RUNG = "ib_write_bw"


def _subject(t: IbTest) -> str:
    return f"{t.device} {t.client}->{t.server}"


def _worst(fails: list[IbTest], node: str) -> str:
    rates = [t.result.gbps for t in fails if node in (t.server, t.client)]
    known = [r for r in rates if r is not None]
    return fmt(min(known)) if known else "no result"


def _isolate(device: str, tests: list[tuple[IbTest, bool]], limit: float,
             ) -> list[Shortfall]:
    fails = [t for t, ok in tests if not ok]
    if not fails:
        return []
    seen: dict[str, list[bool]] = defaultdict(list)
    for t, ok in tests:
        seen[t.server].append(ok)
        seen[t.client].append(ok)

    def slow(ts: list[IbTest]) -> str:
        return ", ".join(f"{t.client}->{t.server} "
                         f"{fmt(t.result.gbps) if t.result.gbps is not None else 'no result'}"
                         f"{' Gb/s' if t.result.gbps is not None else ''}" for t in ts)

    if all(not ok for _, ok in tests):
        return [Shortfall(RUNG, device, f"rail {device} falls short on every test ({slow(fails)};"
                          f" expected >= {fmt(limit)} Gb/s): with every node slow the fault "
                          "is not on one node (the rail's switch, the port rate the subnet "
                          "manager set, or too few nodes to tell)")]
    culprits = sorted(n for n, oks in seen.items() if not any(oks))
    out = [Shortfall(RUNG, f"{n} {device}",
                     f"{device} on {n}: all its tests fall short "
                     f"({slow([t for t in fails if n in (t.server, t.client)])}; expected >= "
                     f"{fmt(limit)} Gb/s) while its peers pass elsewhere: its port, cable or "
                     "transceiver (ibstat rate, ibdiagnet)", (n,),
                     f"ib_write_bw {device} {_worst(fails, n)} Gb/s < {fmt(limit)}")
           for n in culprits]
    unexplained = [t for t in fails if t.server not in culprits and t.client not in culprits]
    out += [Shortfall(RUNG, f"{device} {t.client}-{t.server}",
                      f"{device} between {t.client} and {t.server}: {slow([t])} (expected >= "
                      f"{fmt(limit)} Gb/s); both ends pass with other peers: the path "
                      "between them (switch ports, routing)")
            for t in unexplained]
    return out


def ib_write_bw(run: Run, model: AcceptanceModel) -> tuple[list[Check], list[Shortfall]]:
    """One check per test, then the isolation above per rail; rails or nodes the plan has
    but the run did not test are errors."""
    exp = model.ib_write_bw()
    checks: list[Check] = []
    by_rail: dict[str, list[tuple[IbTest, bool]]] = defaultdict(list)
    for t in sorted(run.ib, key=lambda t: (t.device, t.client, t.server)):
        issues = "; ".join(i.text() for i in t.result.issues)
        c = check(RUNG, exp, _subject(t), t.result.gbps, (t.client, t.server), issues)
        checks.append(c)
        by_rail[t.device].append((t, c.status == "pass"))
    for issue in run.issues:  # a node's file without a single test in it
        if issue.file.startswith("ib/"):
            node = issue.file.removeprefix("ib/").removesuffix(".txt")
            checks.append(check(RUNG, exp, node, None, (node,), issue.text()))
    shorts: list[Shortfall] = []
    for device in sorted(by_rail):
        shorts += _isolate(device, by_rail[device], exp.limit)
    if run.ib:
        tested = {(t.device, n) for t in run.ib for n in (t.client, t.server)}
        for rail in run.rails:
            for node in run.nodes:
                if len(run.nodes) > 1 and (rail, node) not in tested:
                    checks.append(check(RUNG, exp, f"{rail} {node}", None, (node,),
                                        f"no ib_write_bw result for {rail} on {node}"))
    return checks, shorts

"""Address ranges: defaults sized from the plan with room to grow, user ranges kept and
checked with a located error (issue 9, point 2)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from benchmarks.synthetic_plan import plan_for
from generator import pipeline
from generator.catalog.load import default_catalog
from generator.errors import PodplanError
from generator.plan.network.addressing import GROWTH
from tests.unit.lockhelp import identities, moved, relock
from tests.unit.lockhelp import plan as lock_plan

SPEC = """\
name: r
workloads:
  - name: train
    kind: pretrain
    model: llama2-70b
    steps: 100
hardware:
  gpus: {gpus}
{extra}"""


def _write(tmp_path: Path, nodes: int, extra: str = "") -> str:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(gpus=8 * nodes, extra=extra), encoding="utf-8")
    return str(path)


def test_small_plans_keep_the_documented_defaults() -> None:
    net = plan_for(8, default_catalog())[1].network
    assert (net.oob_cidr, net.mgmt_cidr, net.frontend_cidr, net.fabric_cidr) == (
        "10.128.0.0/20",
        "10.129.0.0/20",
        "10.130.0.0/20",
        "10.200.0.0/16",
    )


def test_2048_nodes_without_network_section_grow_on_the_same_base() -> None:
    plan = plan_for(2048, default_catalog())[1]
    net = plan.network
    oob = ipaddress.ip_network(net.oob_cidr)
    assert oob.network_address == ipaddress.ip_address("10.128.0.0")
    assert oob.prefixlen < 20
    bmc = [n.addresses.bmc for n in plan.nodes] + [s.mgmt_address for s in plan.switches]
    assert oob.num_addresses >= GROWTH * len(bmc)  # room to grow
    assert all(ipaddress.ip_interface(a).network == oob for a in bmc if a)
    assert any("network.oob_cidr is not set" in n for n in plan.notes)
    # the small cluster's first addresses are the big one's: growth moves nothing
    small = plan_for(8, default_catalog())[1]
    assert small.nodes[0].addresses.bmc.split("/")[0] == plan.nodes[0].addresses.bmc.split("/")[0]


def test_a_user_range_is_kept_and_a_too_small_one_is_located(tmp_path: Path) -> None:
    ok = _write(tmp_path, 8, "network:\n  oob_cidr: 10.128.0.0/24\n")
    assert pipeline.plan(pipeline.load_checked(ok)).network.oob_cidr == "10.128.0.0/24"
    bad = _write(tmp_path, 64, "network:\n  oob_cidr: 10.128.0.0/26\n")
    with pytest.raises(PodplanError) as exc:
        pipeline.plan(pipeline.load_checked(bad))
    err = exc.value
    assert err.source == bad
    assert [(p.path, p.line) for p in err.problems] == [("network.oob_cidr", 10)]
    assert "unset" in (err.problems[0].hint or "")


def test_a_grown_default_that_would_overlap_a_user_range_is_an_error() -> None:
    with pytest.raises(PodplanError) as exc:
        plan_for(2048, default_catalog(), network={"mgmt_cidr": "10.128.32.0/20"})
    assert exc.value.problems[0].path == "network.oob_cidr"
    assert "overlaps network.mgmt_cidr" in exc.value.problems[0].message


def test_a_locked_plan_outgrowing_a_user_range_is_located() -> None:
    net = {"oob_cidr": "10.128.0.0/26"}
    base = lock_plan(8, network=net)
    with pytest.raises(PodplanError) as exc:
        lock_plan(64, relock(base), network=net)
    assert [p.path for p in exc.value.problems] == ["network.oob_cidr"]
    assert "too small" in exc.value.summary


def test_a_default_range_widens_under_a_lock_and_keeps_every_address() -> None:
    base = lock_plan(8)
    grown = lock_plan(2048, relock(base))  # 4,485 OOB addresses: more than a /20
    old = ipaddress.ip_network(base.network.oob_cidr)
    new = ipaddress.ip_network(grown.network.oob_cidr)
    assert new.network_address == old.network_address and new.prefixlen < old.prefixlen
    before, after = identities(base), identities(grown)
    kept = [n for n in before if n in after]  # the 1-SU fabric's leaves go: 2 tiers now
    assert kept and not {n: moved(before[n], after[n]) for n in kept if moved(before[n], after[n])}
    assert any("every locked address is kept" in n for n in grown.notes)

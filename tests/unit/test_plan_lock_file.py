"""plan.lock.yaml as a file: a hand-edited or damaged lock is refused with its line."""

from __future__ import annotations

import re
from functools import cache

import pytest
import yaml

from generator.errors import PodplanError
from generator.plan.lock.read import parse_lock
from generator.plan.lock.text import lock_text
from tests.unit.lockhelp import plan, relock


@cache
def _text() -> str:
    return lock_text(plan(8, hardware={"hot_spares": 1}))


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def _error(text: str) -> PodplanError:
    with pytest.raises(PodplanError) as exc:
        parse_lock(text, "reports/grow/plan.lock.yaml")
    return exc.value


EDITS = [
    # (what, old, new, the line that must be named, the field path)
    ("bad address", "mgmt: 10.129.0.14,", "mgmt: 10.129.0.300,", "gpu002:", "devices.gpu002.mgmt"),
    ("address twice", "mgmt: 10.129.0.14,", "mgmt: 10.129.0.13,", "gpu002:", "devices.gpu002.mgmt"),
    ("unknown key", "{role: compute,", "{rolle: compute,", "gpu001:", "devices.gpu001.rolle"),
    ("bad U", "rack: r01, u: 7,", "rack: r01, u: seven,", "gpu002:", "devices.gpu002.u"),
    ("unknown rack", "rack: r01, u: 7,", "rack: r99, u: 7,", "gpu002:", "devices.gpu002.rack"),
    ("bad role", "{role: compute,", "{role: gpu,", "gpu001:", "devices.gpu001.role"),
    ("port twice", "1/2: gpu002 mlx5_0", "1/1: gpu002 mlx5_0", "1/1: gpu002 mlx5_0", "cables."),
    ("broken cable", "1/2: gpu002 mlx5_0", "1/2 gpu002 mlx5_0", "1/2 gpu002 mlx5_0", "cables."),
    ("cable to nowhere", "1/2: gpu002 mlx5_0", "1/2: gpu099 mlx5_0", "1/2: gpu099", "cables."),
    ("format", "lock: 1", "lock: 9", "lock: 9", "lock"),
    ("two racks in one spot", "position: 2,", "position: 1,", "r02:", "racks.r02"),
]


@pytest.mark.parametrize("what,old,new,at,path", EDITS, ids=[e[0] for e in EDITS])
def test_a_hand_edit_is_located(what: str, old: str, new: str, at: str, path: str) -> None:
    text = _text()
    assert old in text, what
    edited = text.replace(old, new, 1)
    err = _error(edited)
    [p] = err.problems
    assert err.source == "reports/grow/plan.lock.yaml"
    assert p.line == _line(edited, at), (what, p)
    assert p.path.startswith(path), (what, p.path)
    assert "--fresh" in (p.hint or "")


def test_a_cut_short_or_foreign_file_is_refused() -> None:
    text = _text()
    cut = text[: text.index("\nretired:")]
    assert "section missing" in _error(cut).problems[0].message
    assert _error("just: some yaml\n").problems[0].line == 1
    assert "not a plan lock" in _error("# only a comment\n").problems[0].message
    moved = text.replace("\ncables:", "\n  stray: line\ncables:", 1)
    assert _error(moved).problems[0].line == _line(moved, "stray: line")


def test_the_fast_and_the_checking_reader_agree() -> None:
    text = _text()
    lock = parse_lock(text, "x")
    doc = yaml.safe_load(text)
    got = {(c.b, c.b_port): f"{c.a} {c.a_port}" for c in lock.cables}
    assert got == {
        (b, port): far for b, ports in doc["cables"].items() for port, far in ports.items()
    }
    assert {n: d.u for n, d in lock.devices.items()} == {
        n: d["u"] for n, d in doc["devices"].items()
    }
    assert lock.rails == doc["rails"] and lock.networks == doc["networks"]
    assert {n: r.pdus for n, r in lock.racks.items()} == {
        n: r["pdus"] for n, r in doc["racks"].items()
    }
    # a lock in the layout, but not the one the fast path reads, is read the slow way
    spaced = re.sub(r"\n  (ib-leaf-01):\n", r"\n  \1:\n\n", text, count=1)
    assert [c[:4] for c in parse_lock(spaced, "x").cables] == [c[:4] for c in lock.cables]


def test_retired_devices_round_trip() -> None:
    base = plan(10)
    shrunk = plan(8, relock(base))
    lock = relock(shrunk)
    assert {"gpu009", "gpu010"} <= set(lock.retired)
    gpu9 = {n.name: n for n in base.nodes}["gpu009"].addresses
    assert lock.retired["gpu009"]["mgmt"] == gpu9.mgmt.split("/")[0]  # type: ignore[union-attr]
    assert lock.changes == shrunk.identity_changes

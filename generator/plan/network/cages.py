"""One plug per twin-port cage: make the media of links that share a cage agree.

A twin-port OSFP cage (a QM9790 cage, a DGX H100 cage) takes one plug for its two ports:
either one shared cable (a splitter or a twin DAC, decided together by ``media``) or one
twin-port transceiver with an MPO per port. The two fibres of such a transceiver may go to
different places -- a leaf cage with one port to a UFM appliance and one to a spine, a
spine cage with ports to two leaves at different distances -- but the module itself is
one part, so both links must use media whose transceiver at this end is the same.

``harmonize`` finds cages whose links disagree and moves those links to the first
transceiver (in the catalog's preference order) that every one of them can use within its
reach; a link that changes may in turn disagree with the other link of its far cage, which
is then fixed the same way (a worklist). Links only ever move later in the preference order
(copper -> SR4 -> DR4 -> FR4), so the worklist settles; the loop is bounded anyway. A cage
with no common module is an error naming the links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import MediaModel
from generator.plan.network.media import MediaPicker, RawLink

End = tuple[RawLink, int]  # a link and which end (0 = a, 1 = b) sits in the cage
CageKey = tuple[str, str]
MAX_ROUNDS = 100_000


def _plug(lk: RawLink, end: int) -> str:
    """What sits in the cage at this end: a transceiver id, or the cable itself."""
    part = lk.a_part if end == 0 else lk.b_part
    return part if part is not None else f"cable:{lk.media}"


class _CageNames:
    """The cage a port sits in, or None (memoized: a fabric has few distinct port names)."""

    def __init__(self, twin_node_cage: Callable[[str], bool]) -> None:
        self.twin_node_cage = twin_node_cage
        self.memo: dict[tuple[str, str], str | None] = {}

    def __call__(self, port: str, cage_type: str) -> str | None:
        key = (port, cage_type)
        if key not in self.memo:
            name = None
            if "/" in port and not port.startswith("1/1/"):
                name = port.partition("/")[0]
            elif port.startswith("mlx5_") and self.twin_node_cage(cage_type):
                name = f"osfp{int(port[5:]) // 2}"
            self.memo[key] = name
        return self.memo[key]

    def of(self, lk: RawLink) -> list[tuple[CageKey, int]]:
        out = []
        a = self(lk.a_port, lk.a_cage)
        if a is not None:
            out.append(((lk.a, a), 0))
        b = self(lk.b_port, lk.b_cage)
        if b is not None:
            out.append(((lk.b, b), 1))
        return out


def twin_cages(links: list[RawLink], names: _CageNames) -> dict[CageKey, list[End]]:
    """Every twin-port cage with two links: QM9790 ``<cage>/<port>`` ports, and node ports
    ``mlx5_<r>`` in a twin-port adapter cage."""
    cages: dict[CageKey, list[End]] = defaultdict(list)
    for lk in links:  # ``names.of`` unrolled: 60,000 links at 2,048 nodes
        a = names(lk.a_port, lk.a_cage)
        if a is not None:
            cages[(lk.a, a)].append((lk, 0))
        b = names(lk.b_port, lk.b_cage)
        if b is not None:
            cages[(lk.b, b)].append((lk, 1))
    return {k: v for k, v in cages.items() if len(v) > 1}


def _mixed(ends: list[End]) -> bool:
    first = _plug(*ends[0])
    return any(_plug(lk, e) != first for lk, e in ends[1:])


def _options(picker: MediaPicker, lk: RawLink, end: int) -> list[tuple[str, MediaModel, bool]]:
    """(transceiver at ``end``, medium, swapped) for straight media that reach the link and
    come no earlier in the preference order than its current medium (links only move up,
    so the worklist settles)."""
    rank = picker.rank
    out = []
    for m, swapped in picker.candidates(lk.a_cage, lk.b_cage, lk.speed_gbps):
        if m.per_cable != 1 or picker.stocked(m, lk.need_m) is None:
            continue
        if rank[m.id] < rank[lk.media]:
            continue
        a_opt, b_opt = (m.b_optic, m.a_optic) if swapped else (m.a_optic, m.b_optic)
        part = a_opt if end == 0 else b_opt
        if part is not None:
            out.append((part, m, swapped))
    return out


def _common(
    picker: MediaPicker, ends: list[End], key: CageKey
) -> dict[int, tuple[MediaModel, bool]]:
    """Per link (by id) the medium that puts the first shared transceiver in this cage."""
    options = [_options(picker, lk, end) for lk, end in ends]
    parts = [p for p, _, _ in options[0]]
    shared = next((p for p in parts if all(any(q == p for q, _, _ in o) for o in options)), None)
    if shared is None:
        where = ", ".join(f"{lk.a} {lk.a_port} - {lk.b} {lk.b_port}" for lk, _ in ends)
        raise PodplanError(
            "no transceiver serves both ports of a twin-port cage",
            problems=[
                Problem(
                    path="facility",
                    message=f"{key[0]} cage {key[1]}: {where}",
                    hint="reduce facility.racks_per_row / row_pitch_m, or use more rows",
                )
            ],
        )
    return {
        id(lk): next((m, s) for p, m, s in o if p == shared)
        for (lk, _), o in zip(ends, options, strict=True)
    }


def _assign(picker: MediaPicker, lk: RawLink, m: MediaModel, swapped: bool) -> None:
    got = picker.stocked(m, lk.need_m)
    assert got is not None
    lk.media = m.id
    lk.a_part, lk.b_part = (m.b_optic, m.a_optic) if swapped else (m.a_optic, m.b_optic)
    lk.length_m, lk.part_number = got


def harmonize(
    picker: MediaPicker, links: list[RawLink], twin_node_cage: Callable[[str], bool]
) -> None:
    """Make every twin-port cage hold one plug (see the module docstring)."""
    names = _CageNames(twin_node_cage)
    cages = twin_cages(links, names)
    work = [k for k, ends in cages.items() if _mixed(ends)]
    rounds = 0
    while work:
        rounds += 1
        if rounds > MAX_ROUNDS:
            raise AssertionError("twin-port cage media did not settle")
        key = work.pop()
        ends = cages[key]
        if not _mixed(ends):
            continue
        chosen = _common(picker, ends, key)
        for lk, _ in ends:
            m, swapped = chosen[id(lk)]
            if m.id != lk.media:
                _assign(picker, lk, m, swapped)
                work += [k for k, _ in names.of(lk) if k != key and k in cages]

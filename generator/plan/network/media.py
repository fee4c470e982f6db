"""Pick the medium of every link from its two cages, its speed and its length.

A medium (``media.yaml``) fits a link when its plugs go into both cages (``cage_accepts``,
either orientation), its speed is the link's, and one of its stocked lengths covers the
routed length. Among those, the first in the catalog's ``preference`` order wins: passive
copper before active copper before optics, multimode before single-mode, so DAC (<= 3 m)
and ACC (<= 5 m) serve in-rack and adjacent-rack runs and transceivers with fibre the rest.

Links that share hardware are decided together (a ``LinkGroup``): the two ports of one
twin-port OSFP switch cage take one splitter cable or one twin-port transceiver, so both
get the medium that covers the longer of the two runs; the two links between the same pair
of twin-port cages (back-to-back switches) may share one twin-port DAC. A group whose run
no medium covers is an error naming the link, not a silent longest-reach guess.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property

from generator.errors import PodplanError, Problem
from generator.plan.catalog_models import MediaModel, PlanCatalog


@dataclass
class RawLink:
    """A link before its medium is chosen (ends, cages, speed, routed length)."""

    network: str
    a: str
    a_port: str
    a_cage: str
    b: str
    b_port: str
    b_cage: str
    speed_gbps: int
    need_m: float
    group: tuple[str, ...] = ()
    field: str = ""  # the spec field that chose the cages, for errors (default: facility)
    # filled by choose_media
    media: str = ""
    length_m: float = 0.0
    part_number: str = ""
    a_part: str | None = None
    b_part: str | None = None


@dataclass(frozen=True)
class Choice:
    media: MediaModel
    swapped: bool  # media a end is the link's b end
    length_m: float
    part: str


@dataclass
class MediaPicker:
    pc: PlanCatalog
    _cands: dict[tuple[str, str, int], list[tuple[MediaModel, bool]]] = field(default_factory=dict)
    _stock: dict[tuple[str, float], tuple[float, str] | None] = field(default_factory=dict)
    _lengths: dict[str, list[float]] = field(default_factory=dict)
    decisions: dict[tuple[object, ...], Choice | None] = field(default_factory=dict)

    @cached_property
    def rank(self) -> dict[str, int]:
        """Position of each medium in the catalog's preference order."""
        return {m: i for i, m in enumerate(self.pc.media_preference)}

    def _fits(self, cage: str, plug: str) -> bool:
        return plug in self.pc.cage_accepts.get(cage, [])

    def candidates(self, a_cage: str, b_cage: str, speed: int) -> list[tuple[MediaModel, bool]]:
        key = (a_cage, b_cage, speed)
        if key not in self._cands:
            out = []
            for mid in self.pc.media_preference:
                m = self.pc.media[mid]
                if m.speed_gbps != speed:
                    continue
                if self._fits(a_cage, m.a_plug) and self._fits(b_cage, m.b_plug):
                    out.append((m, False))
                elif self._fits(a_cage, m.b_plug) and self._fits(b_cage, m.a_plug):
                    out.append((m, True))
            self._cands[key] = out
        return self._cands[key]

    def stocked(self, m: MediaModel, need: float) -> tuple[float, str] | None:
        """The shortest stocked length of ``m`` covering ``need`` m, and its part number
        (memoized: a floor repeats the same run lengths thousands of times)."""
        key = (m.id, need)
        if key in self._stock:
            return self._stock[key]
        got = None
        if need <= m.reach_m:
            lengths = self._lengths.get(m.id)
            if lengths is None:
                lengths = self._lengths[m.id] = sorted(m.lengths_m)
            i = bisect_left(lengths, need)
            if i < len(lengths):
                got = (lengths[i], m.lengths_m[lengths[i]])
        self._stock[key] = got
        return got


def _shared_ok(m: MediaModel, links: list[RawLink]) -> bool:
    """Can one cable of ``m`` serve the whole group (splitter / twin DAC rules)?

    Group keys say what the links share: ``("cage", switch, cage)`` for the ports of one
    twin-port switch cage, ``("pair", a, cage, b, cage)`` for two links between the same
    two twin-port cages.
    """
    if m.per_cable == 1:
        return True
    kind = links[0].group[0] if links[0].group else ""
    if m.per_cable == "cage":
        return kind == "cage"
    return kind == "pair" and len(links) == 2


def _decide(picker: MediaPicker, links: list[RawLink]) -> Choice | None:
    first = links[0]
    need = max(lk.need_m for lk in links)
    kind = first.group[0] if first.group else ""
    key = (first.a_cage, first.b_cage, first.speed_gbps, kind, len(links) == 2, need)
    if key in picker.decisions:
        return picker.decisions[key]
    choice = None
    for m, swapped in picker.candidates(first.a_cage, first.b_cage, first.speed_gbps):
        if not _shared_ok(m, links):
            continue
        got = picker.stocked(m, need)
        if got is not None:
            choice = Choice(m, swapped, got[0], got[1])
            break
    picker.decisions[key] = choice
    return choice


def choose_media(pc: PlanCatalog, links: list[RawLink]) -> None:
    """Set medium, length, part number and transceivers on every link, group by group, then
    make the links that share a twin-port cage agree on its plug (``cages``)."""
    from generator.plan.network.cages import harmonize

    picker = MediaPicker(pc)
    groups: dict[tuple[str, ...], list[RawLink]] = {}
    singles: list[RawLink] = []
    for lk in links:
        if lk.group:
            groups.setdefault(lk.group, []).append(lk)
        else:
            singles.append(lk)
    for members in [*groups.values(), *([lk] for lk in singles)]:
        choice = _decide(picker, members)
        if choice is None:
            lk = max(members, key=lambda x: x.need_m)
            if not picker.candidates(lk.a_cage, lk.b_cage, lk.speed_gbps):
                raise _no_medium(lk)
            raise PodplanError(
                "no cable or optic reaches a link of the plan",
                problems=[
                    Problem(
                        path="facility",
                        message=(
                            f"{lk.a} {lk.a_port} ({lk.a_cage}) to {lk.b} {lk.b_port} "
                            f"({lk.b_cage}) at {lk.speed_gbps}G needs {lk.need_m:.1f} m"
                        ),
                        hint="reduce facility.racks_per_row / row_pitch_m, or use more rows",
                    )
                ],
            )
        _apply(picker, choice, members)
    harmonize(picker, links, lambda cage: cage.endswith("-TWIN"))


def _no_medium(lk: RawLink) -> PodplanError:
    """No catalogued cable joins the two cages at the link's speed (a design choice, not the
    floor): the error names the spec field that chose the hardware."""
    return PodplanError(
        "no cable or optic joins two ports of the plan",
        problems=[
            Problem(
                path=lk.field or "hardware",
                message=(
                    f"{lk.a} {lk.a_port} ({lk.a_cage}) to {lk.b} {lk.b_port} ({lk.b_cage}) at "
                    f"{lk.speed_gbps}G: media.yaml has no cable or optics pair for these cages"
                ),
                hint="choose hardware whose ports can be cabled together",
            )
        ],
    )


def _apply(picker: MediaPicker, c: Choice, members: list[RawLink]) -> None:
    m = c.media
    a_opt, b_opt = (m.b_optic, m.a_optic) if c.swapped else (m.a_optic, m.b_optic)
    for lk in members:
        lk.media = m.id
        lk.a_part, lk.b_part = a_opt, b_opt
        if m.per_cable == 1:
            got = picker.stocked(m, lk.need_m)
            assert got is not None
            lk.length_m, lk.part_number = got
        else:
            lk.length_m, lk.part_number = c.length_m, c.part

"""The compute fabric's shape: switch counts and wiring pattern from the node count.

A rail-optimized fat tree of k-port InfiniBand switches (``fabric_parts`` picks the model
from the node NIC's generation: 64-port NDR QM9790, 40-port HDR QM8790); ``fabric`` names
the switches and wires them. Shape rules (``shape_fabric``), k = switch radix, SU = k/2
nodes (32 with QM9790 as in the DGX H100 SuperPOD RA; 20 with QM8790 as in the DGX A100
SuperPOD RA, S65), R = rails = fabric NICs per node, D = designed nodes (compute + spares +
``fabric.growth_nodes``). The figures below are for k = 64; with k = 40 every 32 is 20,
every 64 is 40 (two tiers up to 40 leaves = 5 SUs of 8 rails, 100 nodes):

* **Scalable units** (D > 32): ``ceil(D / 32)`` SUs, one leaf per rail per SU (32 node ports
  down, 32 up). The last SU is built in full, leaves and leaf-spine cables, even when it is
  only partly populated (DGX SuperPOD RA build rule). Two tiers while the leaves' uplinks fit
  on at most k/2 spines (``L x 32 <= 2,048`` endpoints): the spine count is the smallest
  divisor of the 32 leaf uplinks with ``spines x 64 >= leaves x 32``, so every leaf reaches
  every spine with the same number of cables. Beyond that, three tiers: pods of 32 leaves,
  32 spines per pod (one link from each leaf to each pod spine), and one core plane per spine
  position with ``ceil(pods x 32 / 64)`` cores, the spine uplinks spread round-robin.
  In two tiers the two ports of a leaf cage go to one spine cage (when the port counts
  allow), so a leaf and a spine in the same or the next rack can share one twin-port copper
  cable instead of two transceivers and fibres.
  For full SUs this reproduces the SuperPOD table (1, 2, 4, 8, 16, 32, 64 SU -> 8/4/0,
  16/8/0, 32/16/0, 64/32/0, 128/128/64, 256/256/128, 512/512/256).
* **Small clusters** (D <= 32, one partial SU): building a full SU (8 leaves + 4 spines for
  8 rails) would idle most of it, so podplan collapses rails onto fewer leaves while keeping
  every path non-blocking: G leaves (G the smallest power of two, at least 2, dividing R
  with at most 32 node ports per leaf) -- two leaves are joined back to back by as many
  inter-switch links as they have node ports (this is the Dell 8-node validated design's
  2x QM9790, for both of its NIC configurations), four or more leaves get spines.
  ``fabric.growth_nodes`` sizes the fabric for later nodes.
* **Smallest fabric rule**: no InfiniBand fabric for a single node (its GPUs talk over
  NVLink/NVSwitch; the build step gives it zero rails), and never fewer than two switches
  for two or more nodes, so a switch failure or firmware upgrade leaves every node on half
  its rails instead of cutting the cluster off (Dell's validated design, seed 004).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.errors import PodplanError, Problem

SU_NODES = 32
"""Nodes per scalable unit of the 64-port NDR fabric; a shape's own is ``su_nodes``."""


@dataclass(frozen=True)
class FabricShape:
    """Switch counts and wiring pattern of the compute fabric (no names yet)."""

    style: str  # none | single | pair | clos2 | clos3
    tiers: int
    rails: int
    radix: int
    designed_nodes: int
    scalable_units: int
    leaves: int
    rails_per_leaf: int
    leaf_up: int
    spines_per_pod: int = 0
    pods: int = 0
    pod_leaves: int = 0
    cores_per_plane: int = 0
    lock_note: str = ""
    """Why the shape is not the rules' own: kept or grown from the plan lock (``lock.fabric``)."""
    rail_leaf: tuple[int, ...] = ()
    """Collapsed leaves (``ib-leaf-NN``) of a plan lock: the leaf of each rail, when it is
    not ``rail // rails_per_leaf`` (a regrouped fabric keeps each leaf's first rails); in
    the SU layout, the leaves of SU 1 (grown from such a fabric, they keep their names)."""

    @property
    def su_nodes(self) -> int:
        """Nodes per scalable unit: half the radix, one leaf port down per node per rail
        and as many up (32 on 64-port NDR switches, 20 on 40-port HDR switches)."""
        return self.radix // 2 if self.radix else SU_NODES

    @property
    def su_layout(self) -> bool:
        """Built from full scalable units (one leaf per rail per SU); a locked fabric kept
        on a shrink may have more of them than its designed nodes need."""
        return self.designed_nodes > self.su_nodes or self.scalable_units > 1

    @property
    def leaf_down(self) -> int:
        """Node ports per leaf (designed, incl. growth slots)."""
        return self.su_nodes if self.su_layout else self.designed_nodes * self.rails_per_leaf

    @property
    def spines(self) -> int:
        return self.spines_per_pod * self.pods

    @property
    def cores(self) -> int:
        return self.cores_per_plane * self.spines_per_pod if self.style == "clos3" else 0

    @property
    def spine_up(self) -> int:
        return self.radix // 2 if self.style == "clos3" else 0


def _smallest_divisor(n: int, at_least: float, of_radix: int, need: int) -> int | None:
    """Smallest divisor s of n with s >= at_least and s * of_radix >= need."""
    for s in range(1, n + 1):
        if n % s == 0 and s >= at_least and s * of_radix >= need:
            return s
    return None


def _collapsed_spines(per_leaf: int, leaves: int, rails: int, radix: int) -> tuple[int, int]:
    """(uplinks per leaf, spines) of a collapsed partial SU: as many uplinks as node ports
    over the smallest divisor of them that takes them all, unless that needs more spines than
    the full SU it collapses (then the fewest spines that do, each leaf's uplinks rounded up
    to a multiple of them). The divisor alone gave 29 nodes x 8 rails 29 spines (29 is
    prime) where the full SU's 4 take them."""
    half = radix // 2
    full_su = _smallest_divisor(half, 1, radix, rails * half) or half
    s = _smallest_divisor(per_leaf, 1, radix, leaves * per_leaf)
    if s is not None and s <= full_su:
        return per_leaf, s
    s = max(1, math.ceil(leaves * per_leaf / radix))
    while True:
        up = -(-per_leaf // s) * s
        if per_leaf + up <= radix and s * radix >= leaves * up:
            return up, s
        s += 1


def _powers_of_two_dividing(n: int) -> list[int]:
    return [g for g in (1, 2, 4, 8, 16, 32, 64) if g <= n and n % g == 0]


def shape_fabric(designed_nodes: int, rails: int, radix: int, sm_ports: int) -> FabricShape:
    """Choose the fabric shape for ``designed_nodes`` nodes with ``rails`` NICs each."""
    half = radix // 2
    d, r = designed_nodes, rails
    if r == 0 or d == 0:
        return FabricShape("none", 0, r, radix, d, 0, 0, 0, 0)
    if d <= half:  # one partial scalable unit of ``half`` nodes
        g = next(g for g in _powers_of_two_dividing(r) if g >= 2 and d * r // g <= half)
        per_leaf = d * (r // g)
        if g == 2:
            return FabricShape("pair", 1, r, radix, d, 1, 2, r // g, per_leaf, 0, 1, 2)
        up, spines = _collapsed_spines(per_leaf, g, r, radix)
        return FabricShape("clos2", 2, r, radix, d, 1, g, r // g, up, spines, 1, g)
    sus = math.ceil(d / half)
    leaves = sus * r
    s = _smallest_divisor(half, 1, radix, leaves * half)
    if s is not None and s <= half:
        return FabricShape("clos2", 2, r, radix, d, sus, leaves, 1, half, s, 1, leaves)
    pods = math.ceil(leaves / half)
    if pods > radix:
        raise PodplanError(
            "the compute fabric would exceed a three-tier fat tree",
            problems=[
                Problem(
                    path="hardware.gpus",
                    message=(
                        f"{d} nodes x {r} rails = {d * r} endpoints; three tiers of {radix}-port"
                        f" switches reach at most {radix**3 // 4}"
                    ),
                )
            ],
        )
    cores = math.ceil(pods * half / radix)
    return FabricShape("clos3", 3, r, radix, d, sus, leaves, 1, half, half, pods, half, cores)

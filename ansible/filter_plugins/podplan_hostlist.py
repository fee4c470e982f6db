"""Slurm hostlist expressions in the podplan roles: ``gpu[0001-0032]`` <-> host names.

The generated inventory writes node lists that every host receives (node set hosts,
topology nodes and switches) as hostlist expressions, so ``group_vars`` grow with node
sets and scalable units, not with nodes squared. Slurm reads the expressions natively in
``slurm.conf``, ``gres.conf`` and ``topology.conf``; these filters serve the places that
need names on the control node (inventory validation before any host exists, the
acceptance ladder comparing the plan with Slurm) and put every expression in one
canonical form.

Each filter takes an expression, a list of names, or a list of expressions (a hand-written
inventory may use any of them). Expressions use Slurm's syntax only: names, ``[a-b,c]``
ranges and commas; ClusterShell's extensions (``@group``, ``!``, ``&``, ``^``) and spaces
are refused. Parsing and folding are ClusterShell's ``NodeSet`` (CEA, LGPL-2.1+): install
it on the control node with ``pip install ClusterShell`` (Debian: python3-clustershell).
"""

from __future__ import annotations

import re
from typing import Any

from ansible.errors import AnsibleFilterError

# Slurm's hostlist syntax: host name characters and commas, '/' for file expressions such
# as gres.conf's /dev/nvidia[0-7], and brackets holding only digits, '-' and ','
# (ClusterShell would also take a '/step' there; Slurm would not).
# Inventory groups of leaf switches: slurm_switch_<switch> holds that switch's nodes.
LEAF_GROUP_PREFIX = "slurm_switch_"
_SLURM_SYNTAX = re.compile(r"(?:[A-Za-z0-9_./,-]|\[[0-9][0-9,-]*\])*\Z")


def _nodeset(value: Any) -> Any:
    """The ClusterShell NodeSet of ``value`` (an expression or a list of them)."""
    try:
        from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetException
    except ImportError as exc:
        raise AnsibleFilterError(
            "podplan's hostlist filters need the ClusterShell library on the control node "
            "(pip install ClusterShell)"
        ) from exc
    if value is None:
        parts: list[str] = []
    elif isinstance(value, str):
        parts = [value]
    elif isinstance(value, list | tuple):
        parts = [str(v) for v in value]
    else:
        raise AnsibleFilterError(
            f"a host list must be a hostlist expression or a list of names, "
            f"got {type(value).__name__}: {value!r}"
        )
    expression = ",".join(p.strip() for p in parts if p.strip())
    if not _SLURM_SYNTAX.match(expression):
        raise AnsibleFilterError(
            f"{expression!r} is not a Slurm hostlist expression: use names, [a-b,c] "
            "ranges and commas only"
        )
    try:
        return NodeSet(expression, resolver=RESOLVER_NOGROUP)
    except NodeSetException as exc:
        raise AnsibleFilterError(
            f"{expression!r} is not a Slurm hostlist expression: {exc}"
        ) from exc


def hostlist_expand(value: Any) -> list[str]:
    """Every name, sorted as ``scontrol show hostnames`` prints them, each once."""
    return [str(name) for name in _nodeset(value)]


def hostlist_fold(value: Any) -> str:
    """The canonical expression (sorted, shortest ranges): ``gpu[0001-0003]``."""
    return str(_nodeset(value))


def hostlist_count(value: Any) -> int:
    """How many names the expression holds, without listing them."""
    return len(_nodeset(value))


def leaf_switches(groups: Any, topology: Any = None) -> list[dict[str, str]]:
    """The topology's leaf switches: ``[{'switch': 'su1', 'nodes': 'gpu[0001-0032]'}, ...]``.

    From the inventory groups ``slurm_switch_<switch>`` (``groups``, Ansible's magic
    variable: the generated inventory lists each node once there), then from entries of
    ``topology`` (``slurm_topology``) that name nodes themselves, as a hand-written
    inventory may. In Slurm's (natural) order of switch names; a switch named twice is
    kept twice so that validation can report it.
    """
    found = [
        {"switch": name[len(LEAF_GROUP_PREFIX) :], "nodes": hostlist_fold(list(hosts))}
        for name, hosts in dict(groups or {}).items()
        if name.startswith(LEAF_GROUP_PREFIX) and hosts
    ]
    for entry in topology or []:
        if isinstance(entry, dict) and entry.get("nodes"):
            found.append(
                {"switch": str(entry.get("switch", "")), "nodes": hostlist_fold(entry["nodes"])}
            )
    order = {name: i for i, name in enumerate(hostlist_expand([f["switch"] for f in found]))}
    return sorted(found, key=lambda f: order.get(f["switch"], len(order)))


def upper_switches(topology: Any) -> list[dict[str, str]]:
    """Entries of ``slurm_topology`` that sit above other switches, expressions folded."""
    return [
        {"switch": str(entry.get("switch", "")), "switches": hostlist_fold(entry["switches"])}
        for entry in topology or []
        if isinstance(entry, dict) and entry.get("switches")
    ]


class FilterModule:
    """podplan_hostlist_expand/fold/count, podplan_leaf_switches, podplan_upper_switches."""

    def filters(self) -> dict[str, Any]:
        return {
            "podplan_hostlist_expand": hostlist_expand,
            "podplan_hostlist_fold": hostlist_fold,
            "podplan_hostlist_count": hostlist_count,
            "podplan_leaf_switches": leaf_switches,
            "podplan_upper_switches": upper_switches,
        }

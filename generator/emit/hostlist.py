"""Node names as Slurm hostlist expressions (``gpu[0001-2048]``) for the inventory.

Why: Ansible copies every ``group_vars/slurm_cluster`` value into every host's variables.
With each node set and topology leaf written as a list of names, the inventory held
nodes x nodes names (366 MB of ``ansible-inventory --list`` at 2,048 nodes). As hostlist
expressions those values grow with the number of node sets and scalable units instead,
and Slurm reads the same syntax natively in ``slurm.conf`` and ``topology.conf``.

Folding and expanding are ClusterShell's ``NodeSet`` (CEA, LGPL-2.1+, the library behind
``clush`` and ``nodeset``), never hand-written range parsing. The roles expand the same
expressions with the filter plugin ``ansible/filter_plugins/podplan_hostlist.py``.
"""

from __future__ import annotations

from collections.abc import Iterable


def fold(names: Iterable[str]) -> str:
    """The shortest Slurm hostlist expression for ``names`` (sorted, duplicates dropped).

    ``["gpu0002", "gpu0001", "head01"]`` -> ``"gpu[0001-0002],head01"``; zero padding is
    kept, so the expression names exactly these hosts.
    """
    # Imported here: only the inventory emitters need it, not every podplan command.
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    return str(NodeSet.fromlist(list(names), resolver=RESOLVER_NOGROUP))


def expand(expression: str) -> list[str]:
    """Every name of a hostlist expression, in Slurm's order (``scontrol show hostnames``)."""
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    return [str(name) for name in NodeSet(expression, resolver=RESOLVER_NOGROUP)]

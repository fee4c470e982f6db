"""``reports/<name>/fabric/``: the InfiniBand hand-off files for cluster bring-up.

* ``p2p.csv`` -- the UFM Cable Validation Tool point-to-point sheet, one row per InfiniBand
  link, in the tool's documented layout (S56): for each end the rack, the U, the node name
  and the port; host ports as HCA numbers (1 = mlx5_0 P1, 2 = mlx5_1 P1, the tool's default
  HCA mapping), switch ports as front-panel split ports (``17/2``). The tool reads the sheet
  from an Excel workbook: open this CSV and save it as .xlsx (one sheet).
* ``<name>.topo`` -- the fabric as an IBDM topology file, the format ``ibdiagnet -t`` and
  ``ibdmchk`` read (S59): one section per switch, ``PORT -4x-> TYPE NAME PORT`` per cable.
  Link speed is left out because the open-source IBDM predates NDR lane rates; the width
  (4x) is given.
``ibnl_definitions`` gives the IBNL system definitions of the system types the topology file
names (QM9790 with its 64 front-panel ports, each host model with its HCA ports). IBNL has
no comment syntax, so they cannot carry podplan's header and are not written to the output
tree; the tests write them to a scratch directory and run the real ``ibdmchk`` (ibutils) on
the topology file with ``IBDM_IBNL_PATH`` pointing there.
"""

from __future__ import annotations

from functools import cache

from generator.plan.models import ClusterPlan, Link
from generator.render.files import OutFile, commented_header, csv_text

P2P_COLUMNS = [
    "A-Rack", "A-U", "A-Node Name", "A-Port", "Z-Rack", "Z-U", "Z-Node Name", "Z-Port",
]  # fmt: skip


def ib_links(plan: ClusterPlan) -> list[Link]:
    """The InfiniBand links, in plan order."""
    return [lk for lk in plan.links if lk.network == "compute"]


def _hca_number(port: str) -> str:
    """``mlx5_3`` -> ``4`` (CVT default mapping); ``ib0`` (one HCA) -> ``1``."""
    if port.startswith("mlx5_"):
        return str(int(port[5:]) + 1)
    return "1"


def p2p_csv(plan: ClusterPlan) -> str:
    # (rack, U) as text once per device, not twice per cable
    where = {n.name: (n.rack, str(n.u)) for n in plan.nodes}
    where.update({s.name: (s.rack, str(s.u)) for s in plan.switches})
    switches = {s.name for s in plan.switches}
    rows: list[list[str]] = []
    for lk in ib_links(plan):
        ra, ua = where[lk.a]
        rb, ub = where[lk.b]
        ap = lk.a_port if lk.a in switches else _hca_number(lk.a_port)
        rows.append([ra, ua, lk.a, ap, rb, ub, lk.b, lk.b_port])
    return commented_header(plan.spec_file) + csv_text(P2P_COLUMNS, rows)


def _types(plan: ClusterPlan) -> dict[str, str]:
    """IBDM system type of every device: its catalog model, upper case."""
    out = {n.name: n.model for n in plan.nodes}
    out.update({s.name: s.model for s in plan.switches})
    return {k: v.upper().replace("-", "_") for k, v in out.items()}


@cache
def _panel(port: str, switch: bool, per_cage: int = 2) -> str:
    """Front-panel name in the topology file: switch ports as P<n> (QM9790 ``17/2`` is
    P34, two ports per cage; QM8790 ``17/1`` is P17), hosts as mlx5_<r>/P1."""
    if switch:
        cage, sub = port.split("/")
        return f"P{(int(cage) - 1) * per_cage + int(sub)}"
    return f"{port if port.startswith('mlx5_') else 'mlx5_0'}/P1"


def topology(plan: ClusterPlan) -> str:
    """IBDM topology file: every IB link once, under the section of its switch end."""
    links = ib_links(plan)
    per_cage = {s.name: s.ports_per_cage for s in plan.switches if s.network == "compute"}
    switches = set(per_cage)
    types = _types(plan)
    sections: dict[str, list[str]] = {s.name: [] for s in plan.switches if s.network == "compute"}
    for lk in links:
        # hosts appear only as remote ends; a switch-to-switch link is listed under its a end
        local, lp, remote, rp = (
            (lk.a, lk.a_port, lk.b, lk.b_port)
            if lk.a in switches
            else (lk.b, lk.b_port, lk.a, lk.a_port)
        )
        sections[local].append(
            f"   {_panel(lp, True, per_cage[local])} -4x-> {types[remote]} {remote} "
            f"{_panel(rp, remote in switches, per_cage.get(remote, 2))}"
        )
    out = [commented_header(plan.spec_file).rstrip("\n")]
    for sw, lines in sections.items():
        if lines:
            out += ["", f"{types[sw]} {sw}", *lines]
    return "\n".join(out) + "\n"


def ibnl_definitions(plan: ClusterPlan) -> dict[str, str]:
    """IBNL text of every system type the topology file names, by type."""
    links = ib_links(plan)
    switch_names = {s.name for s in plan.switches if s.network == "compute"}
    hca_ports: dict[str, set[str]] = {}
    switch_types: dict[str, int] = {}
    radix = {s.name: s.ports for s in plan.switches}
    types = _types(plan)
    for lk in links:
        for dev, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
            t = types[dev]
            if dev in switch_names:
                switch_types[t] = radix[dev]
            else:
                hca_ports.setdefault(t, set()).add(_panel(port, False))
    out = {}
    for t, k in sorted(switch_types.items()):
        body = [f"TOPSYSTEM {t}", "", f"NODE SW {k} {t} U1"]
        body += [f"   {i} -> P{i}" for i in range(1, k + 1)]
        out[t] = "\n".join(body) + "\n"
    for t, ports in sorted(hca_ports.items()):
        body = [f"TOPSYSTEM {t}"]
        for i, port in enumerate(sorted(ports, key=lambda x: int(x[5:].split("/")[0])), 1):
            body += ["", f"NODE CA 1 CX7 U{i}", f"   1 -> {port}"]
        out[t] = "\n".join(body) + "\n"
    return out


def emit_fabric(plan: ClusterPlan) -> list[OutFile]:
    """The hand-off files; none when the plan has no InfiniBand fabric."""
    if not any(lk.network == "compute" for lk in plan.links):  # stops at the first
        return []
    base = f"reports/{plan.name}/fabric"
    return [
        OutFile(f"{base}/p2p.csv", p2p_csv(plan)),
        OutFile(f"{base}/{plan.name}.topo", topology(plan)),
    ]

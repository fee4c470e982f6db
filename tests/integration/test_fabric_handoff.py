"""The fabric hand-off files against their documented formats and the real IBDM tools.

* ``p2p.csv``: the UFM Cable Validation Tool P2P sheet layout (S56): one row per
  InfiniBand link, rack/U/name/port per end, HCA ports as numbers, switch ports split.
* ``<name>.topo``: parsed by the real ``ibdmchk`` (Debian package ibutils, IBDM 1.5.7) in
  design mode with the IBNL definitions podplan derives: every system and node is defined,
  LIDs are assigned and every CA-to-CA path is routed.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.synthetic_plan import plan_for
from generator.catalog.load import default_catalog
from generator.emit.fabric import P2P_COLUMNS, ib_links, ibnl_definitions, p2p_csv, topology

CASES = {
    "dell8-config2": (8, {"hardware": {"east_west_nics_per_node": 4}}),
    "dell8-config1": (8, {}),
    "40-two-tier": (40, {"fabric": {"subnet_manager": "opensm"}}),
    # HDR: 40-port QM8790 (one port per QSFP56 cage, ``17/1``), 2 SUs of 20 DGX A100
    "dgx-a100-40-hdr": (40, {"hardware": {"server": "dgx-a100", "gpu": "a100-sxm-80gb",
                                          "hot_spares": 0}}),
}


def _rows(text: str) -> list[dict[str, str]]:
    body = "".join(line for line in io.StringIO(text) if not line.startswith("#"))
    return list(csv.DictReader(io.StringIO(body)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_p2p_has_one_documented_row_per_ib_link(case: str) -> None:
    nodes, sections = CASES[case]
    plan = plan_for(nodes, default_catalog(), **sections)[1]
    text = p2p_csv(plan)
    header = next(line for line in text.splitlines() if not line.startswith("#"))
    assert header.split(",") == P2P_COLUMNS
    rows = _rows(text)
    assert len(rows) == len(ib_links(plan))
    switches = {s.name for s in plan.switches}
    for row in rows:
        for side in ("A", "Z"):
            port = row[f"{side}-Port"]
            if row[f"{side}-Node Name"] in switches:
                assert re.fullmatch(r"\d+/[12]", port), port  # QM9790 split / QM8790 port
            else:
                assert re.fullmatch(r"[1-8]", port), port  # CVT default HCA mapping
            assert row[f"{side}-Rack"].startswith("r") and int(row[f"{side}-U"]) >= 1
    ends = [(r["A-Node Name"], r["A-Port"]) for r in rows] + [
        (r["Z-Node Name"], r["Z-Port"]) for r in rows
    ]
    assert len(ends) == len(set(ends))


@pytest.mark.skipif(shutil.which("ibdmchk") is None, reason="ibutils (ibdmchk) not installed")
@pytest.mark.parametrize("case", sorted(CASES))
def test_real_ibdmchk_parses_and_routes_the_topology(case: str, tmp_path: Path) -> None:
    nodes, sections = CASES[case]
    plan = plan_for(nodes, default_catalog(), **sections)[1]
    (tmp_path / "ibnl").mkdir()
    for t, text in ibnl_definitions(plan).items():
        (tmp_path / "ibnl" / f"{t}.ibnl").write_text(text)
    topo = tmp_path / "fabric.topo"
    topo.write_text(topology(plan))
    hosts = sorted({lk.a for lk in ib_links(plan)} - {s.name for s in plan.switches})
    run = subprocess.run(
        ["ibdmchk", "-t", str(topo), "-n", f"{hosts[0]}/U1", "-p", "1"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={"IBDM_IBNL_PATH": str(tmp_path / "ibnl"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    out = run.stdout + run.stderr
    assert "-E-" not in out and "-W- Ignoring" not in out, out[-3000:]
    systems = len(hosts) + len({s.name for s in plan.switches if s.network == "compute"})
    assert re.search(rf"Defined {systems}/\d+ systems/nodes", out), out[-3000:]
    cas = len({(lk.a, lk.a_port) for lk in ib_links(plan) if lk.a in hosts})
    assert f"Scanned:{cas * (cas - 1)} CA to CA paths" in out, out[-3000:]

"""ClusterPlan + BOM -> ``reports/<name>/``: plan.yaml, bom.{csv,json,md}, cabling.csv, racks.csv,
plan.lock.yaml.

* ``plan.yaml`` is the resolved ClusterPlan dumped from data (sorted keys). The link list is
  the one part that grows with every GPU (about 30 cables per node at scale), so it lives in
  ``cabling.csv`` and plan.yaml carries a ``cabling`` block with the file name and the link
  counts per network; everything else (nodes with addresses, switches, racks, fabric,
  storage, scheduler, cloud) is in plan.yaml. This keeps a 2,048-node plan.yaml readable and
  fast to write.
* ``cabling.csv``: one row per link, device/port to device/port, transceivers at each end,
  the cage type of each port, the medium, the stocked length and its exact part number.
* ``fabric/``: the InfiniBand hand-off files (``emit.fabric``).
* ``racks.csv``: rack -> U -> device (PDUs are zero-U, listed at U 0).
* ``plan.lock.yaml``: every device's identity, read back by the next plan (``plan.lock``).

plan.yaml is written by a small block-YAML emitter (see ``dump_plan_yaml``).

Output is a pure function of the plan and the BOM, so it is byte-identical for one spec.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from operator import attrgetter
from typing import Any

from generator.bom import BillOfMaterials, format_bom
from generator.emit.fabric import emit_fabric
from generator.gcpause import gc_paused
from generator.plan.lock.text import LOCK_FILE, lock_text
from generator.plan.models import ClusterPlan
from generator.render.files import (
    PROVENANCE_COLUMNS,
    OutFile,
    commented_header,
    csv_text,
    provenance_values,
)

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_SPECIAL = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def _text(s: str) -> str:
    if _PLAIN.fullmatch(s) and s.lower() not in _SPECIAL:
        return s
    # An ASCII JSON string is a valid YAML double-quoted scalar (escapes included).
    return json.dumps(s, ensure_ascii=True)


def _number(x: float) -> str:
    text = repr(x)
    if "e" in text and "." not in text:  # YAML 1.1 floats need a dot: 1e-05 -> 1.0e-05
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    return text


class _Emitter:
    """Block-style YAML, keys sorted, sequences indentless (PyYAML's default layout)."""

    def __init__(self) -> None:
        self.out: list[str] = ["---"]
        self.strings: dict[str, str] = {}

    def scalar(self, x: Any) -> str:
        t = type(x)
        if t is str:
            text = self.strings.get(x)
            if text is None:
                text = self.strings[x] = _text(x)
            return text
        if x is None:
            return "null"
        if t is bool:
            return "true" if x else "false"
        if t is int:
            return str(x)
        if t is float:
            return _number(x)
        if t is dict:
            return "{}"
        if t is list:
            return "[]"
        return self.scalar(str(x))

    def emit(self, obj: Any, pad: str) -> None:
        out = self.out
        if type(obj) is dict:
            for key in sorted(obj):
                value = obj[key]
                kind = type(value)
                if (kind is dict or kind is list) and value:
                    out.append(f"{pad}{key}:")
                    self.emit(value, pad + "  " if kind is dict else pad)
                else:
                    out.append(f"{pad}{key}: {self.scalar(value)}")
            return
        inner = pad + "  "
        cut = len(inner)
        for item in obj:
            kind = type(item)
            if (kind is dict or kind is list) and item:
                start = len(out)
                self.emit(item, inner)
                out[start] = f"{pad}- {out[start][cut:]}"
            else:
                out.append(f"{pad}- {self.scalar(item)}")


def dump_plan_yaml(data: dict[str, Any], spec_file: str) -> str:
    """Sorted block YAML with the provenance header (same layout as ``dump_yaml``).

    A small emitter for plain data (dicts, lists, strings, numbers, booleans, None) instead
    of PyYAML's representer, which takes seconds on a 2,048-node plan; strings that are not
    plain-safe are written as JSON strings, a subset of YAML double-quoted scalars. Tests
    load the output back and compare it with the data.
    """
    emitter = _Emitter()
    emitter.emit(data, "")
    return commented_header(spec_file) + "\n".join(emitter.out) + "\n"


def plan_document(plan: ClusterPlan) -> dict[str, Any]:
    """plan.yaml's data: the whole plan, links replaced by a pointer to cabling.csv."""
    doc = plan.model_dump(mode="json", exclude={"links", "retired", "identity_changes"})
    if not plan.freed:  # only after a re-plan that freed hardware (lock.freed)
        del doc["freed"]
    by_net = Counter(link.network for link in plan.links)
    doc["cabling"] = {
        "file": "cabling.csv",
        "links": len(plan.links),
        "links_by_network": dict(sorted(by_net.items())),
    }
    return doc


CABLING_COLUMNS = [
    "network", "a", "a_port", "a_part", "b", "b_port", "b_part", "speed_gbps", "cable",
    "a_cage", "b_cage", "media", "length_m", "part_number",
]  # fmt: skip


def _cabling_rows(plan: ClusterPlan) -> list[list[str]]:
    fields = attrgetter(*CABLING_COLUMNS)
    lengths: dict[float, str] = {}
    rows = []
    for x in plan.links:
        row = list(fields(x))
        row[3] = row[3] or ""
        row[6] = row[6] or ""
        row[7] = str(row[7])
        length = row[12]
        text = lengths.get(length)
        if text is None:
            text = lengths[length] = f"{length:g}"
        row[12] = text
        rows.append(row)
    return rows


def _with_provenance(columns: list[str], rows: list[list[str]], spec_file: str) -> str:
    """Plain CSV (``csv.DictReader`` reads it as is) with the provenance in two last columns,
    ``generated_by`` and ``regenerate``, on every row (the convention of bom.csv)."""
    made = provenance_values(spec_file)
    return csv_text([*columns, *PROVENANCE_COLUMNS], rows, tail=made)


def cabling_csv(plan: ClusterPlan) -> str:
    """One CSV row per link (``csv_text``: the csv module's output, written fast)."""
    return _with_provenance(CABLING_COLUMNS, _cabling_rows(plan), plan.spec_file)


RACKS_COLUMNS = [
    "rack", "u", "height_u", "device", "kind", "model", "power_kw", "rack_power_kw",
    "rack_budget_kw",
]  # fmt: skip


def racks_csv(plan: ClusterPlan) -> str:
    """rack -> U -> device, one row per slot (PDUs are zero-U, listed at U 0)."""
    model = {n.name: (n.model, n.power_kw) for n in plan.nodes}
    model.update({s.name: (s.model, s.power_kw) for s in plan.switches})
    rows = []
    for rack in plan.racks:
        for slot in rack.slots:
            m, kw = model.get(slot.device, ("", 0.0))
            rows.append([rack.name, str(slot.u), str(slot.height_u), slot.device, slot.kind, m,
                         str(kw), str(rack.power_kw), str(rack.power_budget_kw)])
    return _with_provenance(RACKS_COLUMNS, rows, plan.spec_file)


def emit_reports(plan: ClusterPlan, bom: BillOfMaterials) -> list[OutFile]:
    """Every file of ``reports/<name>/``."""
    base = f"reports/{plan.name}"
    with gc_paused():
        return _files(plan, bom, base)


def _files(plan: ClusterPlan, bom: BillOfMaterials, base: str) -> list[OutFile]:
    return [
        OutFile(f"{base}/bom.csv", format_bom(bom, "csv")),
        OutFile(f"{base}/bom.json", format_bom(bom, "json")),
        OutFile(f"{base}/bom.md", format_bom(bom, "md")),
        OutFile(f"{base}/cabling.csv", cabling_csv(plan)),
        OutFile(f"{base}/plan.yaml", dump_plan_yaml(plan_document(plan), plan.spec_file)),
        OutFile(f"{base}/{LOCK_FILE}", lock_text(plan)),
        OutFile(f"{base}/racks.csv", racks_csv(plan)),
        *emit_fabric(plan),
    ]

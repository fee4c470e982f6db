"""report.html as a file: self-contained, deterministic, accessible, and open to new fields."""

from __future__ import annotations

import re
from functools import cache

from pydantic import Field

from generator import pipeline
from generator.bom import BillOfMaterials
from generator.emit.report import emit_report
from generator.emit.report.blocks import facts_table
from generator.emit.report.racks import device_info, draw_rack
from generator.emit.report.summary import uncertainty_text
from generator.plan.models import ClusterPlan, PowerSummary, Rack, RackSlot


@cache
def _plan(example: str) -> tuple[ClusterPlan, BillOfMaterials]:
    loaded = pipeline.load_checked(f"examples/{example}.yaml")
    plan = pipeline.plan(loaded)
    return plan, pipeline.bill_of_materials(loaded, plan)


def _html(example: str = "dell-8node-config1") -> str:
    plan, bom = _plan(example)
    (out,) = emit_report(plan, bom, ["inventories/x/hosts.yml"])
    assert out.path == f"reports/{plan.name}/report.html"
    return out.content


def test_report_is_byte_identical_across_runs() -> None:
    assert _html() == _html()


def test_report_fetches_nothing() -> None:
    html = _html()
    assert not re.search(r'\b(?:src|href)="(?!#)', html), "only in-page references"
    assert "<link" not in html and "@import" not in html and "url(http" not in html
    assert "<metadata>" not in html and "dc:date" not in html.lower()


def test_ids_are_unique_and_every_drawing_has_a_title() -> None:
    html = _html()
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for svg in re.findall(r"<svg\b[^>]*>.{0,400}", html, re.S):
        if 'class="defs"' in svg[:80]:
            continue
        assert re.match(r"<svg[^>]*><title", svg), svg[:200]


def test_sections_in_reading_order() -> None:
    html = _html()
    order = [m for m in re.findall(r'<section id="([a-z]+)"', html)]
    assert order == ["summary", "workloads", "fabric", "racks", "bom", "reliability", "outputs"]


def test_fields_a_later_plan_adds_show_up() -> None:
    class Facility(PowerSummary):  # a field PowerSummary does not have (yet)
        humidity_percent: float = Field(default=0.0, description="Room humidity.")

    plan, _ = _plan("dell-8node-config1")
    power = Facility(**plan.power.model_dump(), humidity_percent=45.0)
    table = facts_table("f", "Power", power)
    labels = [row[0].text for row in table.rows]
    assert "humidity percent: Room humidity" in labels
    assert uncertainty_text(type("E", (), {"uncertainty_pct": {
        "low": -12, "high": 18, "similar_measurements": 14}})()) == (
        " (−12 %/+18 %, 14 similar measurements)")
    assert uncertainty_text(object()) == ""
    outside = {"low": -24, "high": 50.3, "similar_measurements": 24}  # as the estimate's JSON
    estimate = type("E", (), {"uncertainty_pct": outside,
                              "uncertainty": type("U", (), {"calibrated": False})()})()
    assert uncertainty_text(estimate) == " (−24 %/+50.3 %, outside calibration)"


def test_rack_over_its_limits_says_so_in_words() -> None:
    plan, _ = _plan("dell-8node-config1")
    rack = Rack(name="rx", units=42, power_budget_kw=10.0, power_kw=12.5,
                slots=[RackSlot(u=1, height_u=6, device="gpu001", kind="node")])
    svg = draw_rack(rack, device_info(plan))
    assert "12.5/10 kW OVER" in svg
    assert "<title>Rack rx: 1 GPU node; 12.5 of 10 kW; 6 of 42 U used</title>" in svg
    assert "gpu001 · PowerEdge XE9680" in svg


def test_inference_only_plan_renders() -> None:
    html = _html("llama31-70b-chat")
    assert "No training run in this plan" in html


def test_summary_says_the_whole_server_rounding_once(tmp_path: object) -> None:
    """hardware.gpus: 12 on 8-GPU servers: the sizing and the plan both said it, in two
    wordings, one under the other."""
    from pathlib import Path

    spec = Path(str(tmp_path)) / "odd.yaml"
    spec.write_text("name: odd\nworkloads:\n  - {name: ft, kind: lora, model: llama2-7b, "
                    "steps: 10}\nhardware: {server: xe9680, gpu: h100-sxm-80gb, gpus: 12}\n",
                    encoding="utf-8")
    loaded = pipeline.load_checked(str(spec))
    plan = pipeline.plan(loaded)
    (out,) = emit_report(plan, pipeline.bill_of_materials(loaded, plan), [])
    summary = out.content.split('id="workloads"')[0]
    assert summary.count("round up to 2") == 1
    assert out.content.count("The sizing uses 12 GPUs") == 1  # the BOM's compute line
    assert ("12 GPUs is not a whole number of Dell PowerEdge XE9680 (8 GPUs each): sized on 12 "
            "GPUs; the plan and bill of materials round up to 2 servers (16 GPUs, 4 idle)"
            ) in out.content


def test_serving_seed_gpus_match_podplan_size() -> None:
    """The report rounded the serving seed rule's 4.7 GPUs to '5 GPUs' where podplan size
    prints 4.7 (and 7.46 to '7', below the rule's own figure). The figure follows the
    fitted serving parameters (4.7 since the custom all-reduce refit, 4.6 before); both
    must agree."""
    from generator.sizing import format_table

    plan, _ = _plan("llama31-70b-chat")
    assert "seed rule             4.7 GPUs  [" in format_table(plan.sizing)
    assert "/ 60): 4.7 GPUs; throughput" in _html("llama31-70b-chat")


def test_a_single_node_says_it_has_no_gpu_fabric() -> None:
    """llama31-70b-chat is one node: the card read '0-tier none fabric, 0/0/0'."""
    html = _html("llama31-70b-chat")
    assert ("Ethernet and out-of-band only; no GPU fabric (one node: its GPUs talk over "
            "NVLink)") in html
    assert "0-tier" not in html


def test_fact_tables_label_every_field_in_words_with_units() -> None:
    # the storage table read 'read gbps: Aggregate read, GB/s' and 'drive tb': field names,
    # and 'gbps' reads as gigabits to a purchaser while the figures are gigabytes per second
    plan, _ = _plan("dell-8node-config1")
    for model in (plan.storage, plan.power, plan.network, plan.reliability):
        labels = [row[0].text for row in facts_table("f", "x", model).rows]
        assert labels and all("_" not in x and "gbps" not in x for x in labels), labels
        assert all(x[0].isupper() for x in labels), labels
    storage = [row[0].text for row in facts_table("f", "x", plan.storage).rows]
    assert "Aggregate read (GB/s, planning estimate)" in storage


def test_training_seed_and_time_band_read_as_podplan_size_words_them() -> None:
    """'39 GPUs, 58.7 h' read as 39 GPUs taking 58.7 h (the hours are on the plan's GPUs,
    the count is the A100s the deadline needs); the time card put the band after the
    interruptions."""
    from generator.sizing import format_table

    plan, _ = _plan("llama2-70b-lora")
    html = _html("llama2-70b-lora")
    (t,) = plan.sizing.training
    assert t.seed is not None and t.seed.gpus is not None
    size_line = next(x for x in format_table(plan.sizing).splitlines() if "seed rule" in x)
    assert f"on {t.gpus} GPUs; {t.seed.gpus:,.0f} A100s for the deadline" in size_line
    assert f" on {t.gpus} GPUs; {t.seed.gpus:,.0f} A100s for the deadline; seed rule" in html
    assert re.search(r"compute [^<]*\(−[^<]*similar measurements\), goodput", html)


def test_serving_memory_says_it_is_what_the_batch_uses() -> None:
    """'Memory per GPU 35.9 GiB' beside a KV pool of 1.9 M tokens read as a GPU two-thirds
    empty: the figure is the weights, the KV cache of the operating batch and the runtime."""
    from generator.sizing import format_table

    plan, _ = _plan("llama31-70b-chat")
    (i,) = plan.sizing.inference
    text = format_table(plan.sizing)
    assert f"GiB in use at batch {i.max_batch} (weights, its KV cache, runtime)" in text
    assert "tokens per replica (the engine's pool)" in text
    html = _html("llama31-70b-chat")
    assert f"Memory per GPU in use at batch {i.max_batch} (weights, its KV cache, runtime)" in html


def test_a_plan_without_a_fabric_does_not_describe_one() -> None:
    """'The compute fabric is built for 1 nodes ...; its subnet manager runs on UFM' stood
    in a one-node report whose BOM has neither."""
    html = _html("llama31-70b-chat")
    assert "There is no compute fabric (one node: its GPUs talk over NVLink)." in html
    assert "is built for 1 nodes" not in html and "runs on UFM" not in html
    assert "The compute fabric is built for 8 nodes (32 per scalable unit)" in _html()


def test_cabling_table_shows_the_bom_units_of_every_part() -> None:
    """Every cable row (keyed by part number) showed no BOM units, and the optic rows the
    spares line's (34 switch optics read '1')."""
    from generator.emit.report.bom import cabling_table

    plan, bom = _plan("dell-8node-config1")
    rows = {r[0].text: r for r in cabling_table(plan, bom).rows}
    ordered = {ln.catalog_id: ln.quantity for ln in bom.lines if ln.category == "optics"}
    assert rows["MMA4Z00-NS"][-2].text == f"{ordered['mma4z00-ns']:,}" != "1"
    cables = [r for r in rows.values() if r[2].text == "cable"]
    assert cables and all(r[-2].text and r[1].text for r in cables)
    assert rows["MFP7E10-N007"][-2].text == "64"


def test_cabling_table_names_parts_by_part_number_not_catalog_id() -> None:
    """The table named optics by catalog id (mma4z00-ns) beside cables by part number
    (MFP7E10-N007); a Dell optic sold by quote has no number and is named in words."""
    from generator.emit.report.bom import cabling_table

    plan, bom = _plan("dell-8node-config1")
    keys = {r[0].text for r in cabling_table(plan, bom).rows}
    assert {"MMA4Z00-NS", "MMA4Z00-NS400", "MFP7E10-N003", "MFP7E10-N007"} <= keys
    assert "10GBASE-SR SFP+ multimode transceiver (duplex LC)" in keys
    ids = {ln.catalog_id for ln in bom.lines}
    assert not keys & ids, keys & ids

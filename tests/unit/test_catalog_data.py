"""Checks on the catalog data files themselves (generator/catalog/data/*.yaml).

These tests read the YAML directly so they keep working while the loaders evolve:
every file parses, every figure cites sources that exist and carries a valid status tag,
the ids the rest of podplan relies on are present, and the model architectures reproduce
their published parameter counts with the sizing formula (sizing-models.md section 9.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

DATA_DIR = Path(__file__).resolve().parents[2] / "generator" / "catalog" / "data"

STATUSES = {"V", "V-3P", "R", "E", "LOW"}
# How weak a tag is. An item's status is the weakest tag among its KEY figures, so no key
# field may carry a weaker override than the item itself (minor fields may).
WEAKNESS = {"V": 0, "V-3P": 1, "E": 2, "R": 2, "LOW": 3}
KEY_FIELDS: dict[str, set[str]] = {
    "gpus": {
        "memory_gb",
        "memory_bandwidth_tbps",
        "tdp_w",
        "bf16_dense_tflops",
        "fp8_dense_tflops",
    },
    "servers": {"rack_units", "gpu_slots", "max_power_kw", "typical_power_kw", "memory_gb"},
    "switches": {"ports", "port_speed_gbps", "rack_units", "power_max_w"},
    "models": {
        "layers",
        "hidden_size",
        "attention_heads",
        "kv_heads",
        "ffn_hidden_size",
        "vocab_size",
        "experts",
        "top_k",
    },
    "storage": {"read_gbytes_per_s_per_node", "write_gbytes_per_s_per_node", "rack_units"},
    "cloud": {"gpus", "fabric_gbps", "usd_per_hour"},
}

REQUIRED_IDS: dict[str, set[str]] = {
    "gpus": {"h100-sxm-80gb", "h200-sxm-141gb", "h100-pcie-80gb", "l40s-48gb", "a100-sxm-80gb"},
    "servers": {"xe9680", "xe8640", "r760xa", "r660", "dgx-h100", "dgx-a100"},
    "nics": {"cx7-osfp-1x400", "cx7-qsfp112-2x200", "bf3-b3220", "cx6-lx-2x25", "intel-e810-xxv"},
    "switches": {
        "qm9790",
        "qm9700",
        "sn5600",
        "sn4600c",
        "sn2201",
        "z9664f-on",
        "z9432f-on",
        "s5248f-on",
        "s5448f-on",
        "n3248te-on",
    },
    "optics": {
        "mma4z00-ns400",
        "mma4z00-ns",
        "mms4x00-ns",
        "mms4x00-ns400",
        "mma4z00-ns-flt",
        "mms4x50-nm",
        "qsfp56-dd-400g-sr8",
    },
    "storage": {"powerscale-f710", "powerscale-f910", "powerscale-f210"},
    "cloud": {"aws-p5.48xlarge", "gcp-a3-megagpu-8g", "azure-nd96isr-h100-v5"},
    "prices": {
        "xe9680-h100-sxm",
        "xe8640-h100-sxm",
        "dgx-h100",
        "pdu-3ph-415v-32a",
        "ndr-dac-splitter",
        "ndr-sr4-node",
        "r660",
        "qm9790",
        "qm9700",
        "cx7-osfp-1x400",
        "mma4z00-ns400",
        "mma4z00-ns",
        "powerscale-f710",
        "rack-42u",
        "ufm-appliance",
    },
    "models": {
        "llama2-7b",
        "llama2-13b",
        "llama2-70b",
        "llama3-8b",
        "llama3-70b",
        "llama3.1-8b",
        "llama3.1-70b",
        "llama3.1-405b",
        "llama3.3-70b",
        "mistral-7b",
        "mixtral-8x7b",
        "mixtral-8x22b",
        "gpt3-5b",
        "gpt3-20b",
        "gpt3-175b",
        "nemotron4-340b",
        "falcon-180b",
        "mpt-7b",
        "mpt-30b",
        "mpt-70b",
        "qwen2.5-7b",
        "qwen2.5-32b",
    },
    "reliability": {"llama3-405b-pretraining"},
    "rack": {"rack-42u"},
}

MODEL_FIELDS = {
    "name",
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "ffn_hidden_size",
    "mlp",
    "vocab_size",
    "tied_embeddings",
    "experts",
    "top_k",
    "max_sequence_length",
    "published_params_b",
    "sources",
    "status",
    "field_sources",
    "notes",
}


# The catalog families in the `family` / `items` format. Other data files in the folder
# (e.g. efficiency.yaml, owned by the sizing engine) have their own schema and tests.
FAMILIES = [*sorted(REQUIRED_IDS), "sources"]


def _files() -> list[Path]:
    return [DATA_DIR / f"{family}.yaml" for family in sorted(FAMILIES)]


def test_every_data_file_parses() -> None:
    for path in sorted(DATA_DIR.glob("*.yaml")):
        assert yaml.safe_load(path.read_text(encoding="utf-8")) is not None, path.name


def _load(family: str) -> dict[str, Any]:
    doc = yaml.safe_load((DATA_DIR / f"{family}.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _items(family: str) -> dict[str, dict[str, Any]]:
    items = _load(family)["items"]
    assert isinstance(items, dict)
    return items


def _source_ids() -> set[str]:
    return set(_items("sources"))


def _cited_blocks(node: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every mapping that carries a ``sources`` key, anywhere in a document."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        if "sources" in node:
            found.append((path, node))
        for key, value in node.items():
            found.extend(_cited_blocks(value, f"{path}.{key}"))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.extend(_cited_blocks(value, f"{path}[{i}]"))
    return found


def params(m: dict[str, Any], active: bool = False) -> float:
    """Parameter count from sizing-models.md section 9.1 (Llama-style decoder).

    P_layer = h*(a*d_h) [Q] + 2*h*(g*d_h) [K,V] + (a*d_h)*h [O] + k*h*f*E [MLP] + 2h [norms],
    k = 3 for SwiGLU, 2 for GELU; P = L*P_layer + V*h*(2 if untied else 1) + h. MoE counts
    all E experts for the total (top_k of them for the active count).
    """
    h, a, g = m["hidden_size"], m["attention_heads"], m["kv_heads"]
    d_h = h // a
    k = 3 if m["mlp"] == "swiglu" else 2
    experts = m["top_k"] if active else m["experts"]
    per_layer = h * a * d_h + 2 * h * g * d_h + a * d_h * h + k * h * m["ffn_hidden_size"] * experts
    per_layer += 2 * h
    embeddings = m["vocab_size"] * h * (1 if m["tied_embeddings"] else 2)
    return float(m["layers"] * per_layer + embeddings + h)


# ---- every file ----


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_file_parses_with_family_and_items(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), path
    assert doc.get("family") == path.stem
    assert isinstance(doc.get("items"), dict) and doc["items"], f"{path.name}: no items"


def test_expected_files_exist() -> None:
    for path in _files():
        assert path.is_file(), path.name


def test_sources_have_titles() -> None:
    for sid, src in _items("sources").items():
        assert isinstance(src, dict) and src.get("title"), sid
        assert set(src) <= {"title", "url"}, sid


@pytest.mark.parametrize("path", [p for p in _files() if p.stem != "sources"], ids=lambda p: p.stem)
def test_every_item_cites_known_sources_and_a_valid_status(path: Path) -> None:
    known = _source_ids()
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for item_id, item in doc["items"].items():
        assert isinstance(item, dict), item_id
        assert item.get("name"), f"{path.stem}.{item_id}: no name"
        assert isinstance(item.get("sources"), list) and item["sources"], f"{item_id}: sources"
        assert item.get("status") in STATUSES, f"{path.stem}.{item_id}: status"
        for field, fs in (item.get("field_sources") or {}).items():
            assert field in item, f"{path.stem}.{item_id}: field_sources names unknown {field}"
            assert fs["status"] in STATUSES, f"{path.stem}.{item_id}.{field}"
            assert fs["sources"], f"{path.stem}.{item_id}.{field}: no sources"
            if field in KEY_FIELDS.get(path.stem, set()):
                assert WEAKNESS[fs["status"]] <= WEAKNESS[item["status"]], (
                    f"{path.stem}.{item_id}: item status {item['status']} is not the weakest "
                    f"(key field {field} is {fs['status']})"
                )
    # every cited id anywhere in the file (items, field_sources, family-level blocks) exists
    for where, block in _cited_blocks(doc, path.stem):
        assert isinstance(block["sources"], list) and block["sources"], where
        unknown = set(block["sources"]) - known
        assert not unknown, f"{where}: unknown sources {sorted(unknown)}"
        if "status" in block:
            assert block["status"] in STATUSES, where


@pytest.mark.parametrize("family", sorted(REQUIRED_IDS))
def test_required_ids_exist(family: str) -> None:
    missing = REQUIRED_IDS[family] - set(_items(family))
    assert not missing, f"{family}: missing {sorted(missing)}"


# ---- cross references ----


def test_server_gpu_options_are_catalog_gpus() -> None:
    gpus = set(_items("gpus"))
    for sid, server in _items("servers").items():
        assert set(server["gpu_options"]) <= gpus, sid
        assert len(server["gpu_options"]) > 0 or server["gpu_slots"] == 0, sid


def test_cloud_instances_name_catalog_gpus() -> None:
    gpus = set(_items("gpus"))
    for iid, inst in _items("cloud").items():
        assert inst["gpu"] is None or inst["gpu"] in gpus, iid
        assert (inst["gpu"] is None) == (inst["gpus"] == 0), iid


def test_media_name_catalog_optics_and_have_part_numbers_by_length() -> None:
    doc = _load("media")
    optics = _items("optics")
    accepts = doc["cage_accepts"]["cages"]
    plugs = {p for ps in accepts.values() for p in ps}
    assert set(doc["preference"]) == set(doc["items"])
    for mid, m in doc["items"].items():
        assert m["a_plug"] in plugs and m["b_plug"] in plugs, mid
        for end in ("a_optic", "b_optic"):
            assert m.get(end) is None or m[end] in optics, (mid, end)
        assert m["lengths_m"] and max(m["lengths_m"]) <= m["reach_m"], mid
        assert len(set(m["lengths_m"].values())) == len(m["lengths_m"]), mid
        assert m["sources"] and m["status"] in {"V", "V-3P", "R", "E", "LOW"}, mid


def test_cloud_filesystems_are_cited() -> None:
    fss = _load("cloud")["filesystems"]
    assert {"aws-fsx-lustre-persistent2", "gcp-managed-lustre", "azure-managed-lustre"} <= set(fss)
    fsx = fss["aws-fsx-lustre-persistent2"]
    assert fsx["throughput_tiers_mbytes_per_s_per_tib"] == [125, 250, 500, 1000]
    assert fsx["capacity_min_gib"] == 1200 and fsx["capacity_step_gib"] == 2400
    skus = fss["azure-managed-lustre"]["skus"]
    assert {f"AMLFS-Durable-Premium-{n}" for n in (40, 125, 250, 500)} == set(skus)


def test_prices_say_whether_they_are_estimates() -> None:
    for pid, price in _items("prices").items():
        assert isinstance(price["estimate"], bool), pid
        assert "basis" in price and "date" in price, pid
        assert "usd" in price or "usd_base" in price, pid
        if price.get("usd", 0) is None:
            assert price["status"] in {"R", "E", "LOW"} or "fraction_of_hardware" in price, pid


def test_every_network_part_and_storage_node_has_a_price() -> None:
    prices = set(_items("prices"))
    for family in ("nics", "switches", "optics"):
        missing = set(_items(family)) - prices
        assert not missing, f"{family} without a price: {sorted(missing)}"
    assert "powerscale-f710" in prices


# ---- key figures ----


def test_qm9790_is_64_ports_of_ndr400() -> None:
    qm = _items("switches")["qm9790"]
    assert qm["ports"] == 64 and qm["port_speed_gbps"] == 400
    assert qm["cages"] == 32 and qm["kind"] == "infiniband" and qm["managed"] is False


def test_xe9680_is_6u_and_12_5_kw() -> None:
    xe = _items("servers")["xe9680"]
    assert xe["rack_units"] == 6
    assert xe["max_power_kw"] == pytest.approx(12.5)
    assert xe["gpu_slots"] == 8 and xe["east_west_nic_options"] == [8, 4]
    assert xe["mount_below_u"] == 24


def test_gpu_peak_rates_are_dense() -> None:
    h100 = _items("gpus")["h100-sxm-80gb"]
    assert h100["bf16_dense_tflops"] == pytest.approx(989.4)
    assert h100["fp8_dense_tflops"] == pytest.approx(2 * h100["bf16_dense_tflops"], rel=1e-3)
    assert _items("gpus")["a100-sxm-80gb"]["fp8_dense_tflops"] is None


# ---- model architectures ----


@pytest.mark.parametrize("model_id", sorted(REQUIRED_IDS["models"]))
def test_model_fields_are_exactly_the_architecture_fields(model_id: str) -> None:
    m = _items("models")[model_id]
    assert set(m) <= MODEL_FIELDS, sorted(set(m) - MODEL_FIELDS)
    assert m["mlp"] in {"gelu", "swiglu"}
    assert m["hidden_size"] % m["attention_heads"] == 0
    assert m["attention_heads"] % m["kv_heads"] == 0
    assert 1 <= m["top_k"] <= m["experts"]


@pytest.mark.parametrize("model_id", sorted(REQUIRED_IDS["models"]))
def test_param_count_matches_published_within_6_percent(model_id: str) -> None:
    m = _items("models")[model_id]
    computed_b = params(m) / 1e9
    assert computed_b == pytest.approx(m["published_params_b"], rel=0.06), (
        f"{model_id}: formula {computed_b:.2f}B vs published {m['published_params_b']}B"
    )


def test_formula_reproduces_the_sizing_reference_table() -> None:
    """Spot values from sizing-models.md section 9.1 (computed there with the same formula)."""
    models = _items("models")
    expected = [
        ("llama2-7b", 6.74),
        ("llama2-70b", 68.98),
        ("llama3-8b", 8.03),
        ("llama3-70b", 70.55),
        ("llama3.1-405b", 405.85),
        ("mixtral-8x7b", 46.70),
        ("gpt3-175b", 174.6),
    ]
    for mid, billions in expected:
        assert params(models[mid]) / 1e9 == pytest.approx(billions, abs=0.06), mid
    assert params(models["mixtral-8x7b"], active=True) / 1e9 == pytest.approx(12.88, abs=0.02)
    assert params(models["mixtral-8x22b"], active=True) / 1e9 == pytest.approx(39.2, abs=0.1)


# ---- the typed loader, where it exists ----


def test_typed_models_validate() -> None:
    load = pytest.importorskip("generator.catalog.load")
    cat = load.Catalog(DATA_DIR)
    assert set(cat.gpus) >= REQUIRED_IDS["gpus"]
    assert set(cat.servers) >= REQUIRED_IDS["servers"]
    assert set(cat.models) >= REQUIRED_IDS["models"]
    assert cat.sources


def test_plan_models_validate() -> None:
    load = pytest.importorskip("generator.catalog.load")
    plan = pytest.importorskip("generator.plan.catalog_models")
    pc = plan.PlanCatalog(load.Catalog(DATA_DIR))
    assert set(pc.switches) >= REQUIRED_IDS["switches"]
    assert set(pc.optics) >= REQUIRED_IDS["optics"]
    assert set(pc.storage) >= REQUIRED_IDS["storage"]
    assert set(pc.cloud_instances()) >= REQUIRED_IDS["cloud"]
    assert len(pc.cloud_filesystems()) == 3
    assert pc.rack.rack_units == 42
    assert set(pc.catalog.family("prices", plan.PriceItem)) >= REQUIRED_IDS["prices"]

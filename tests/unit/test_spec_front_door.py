"""The spec's front door in pieces: the hardened YAML reader, the limits table, the messages."""

from __future__ import annotations

import typing

import pytest
import yaml
from pydantic import BaseModel

from generator.errors import PodplanError
from generator.spec import limits, safeyaml
from generator.spec.load import validate_data
from generator.spec.messages import describe, format_path, show
from generator.spec.models import Hardware, Spec

BASE = {"name": "x", "workloads": [{"name": "a", "kind": "lora", "model": "llama2-7b",
                                    "steps": 10}]}


def test_reader_keeps_yaml_12_numbers_and_leaves_dates_as_text() -> None:
    data, lines = safeyaml.load("a: 1e9\nb: 2024-01-01\nc: 1.5e+3\nd: 0x10\n")
    assert data == {"a": 1e9, "b": "2024-01-01", "c": 1500.0, "d": 16}
    assert lines[("c",)] == 3


def test_reader_allows_modest_anchors_and_merge_keys() -> None:
    text = "base: &b {tp: 2, pp: 1}\nx: {<<: *b, pp: 4}\ny: *b\n"
    data, _ = safeyaml.load(text)
    assert data["x"] == {"tp": 2, "pp": 4} and data["y"] == {"tp": 2, "pp": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &a [1]\n" + "".join(f"k{i}: *a\n" for i in range(101)), "more than 100 aliases"),
        ("a: &a [*a]\n", "an alias may not point at a block that contains it"),
        ("1: x\n", "key '1' is not a name"),
        ("? [a]\n: x\n", "a key must be a plain name"),
        ("{a: 1, a: 2}\n", "duplicate key 'a' (first on line 1)"),
        ("a: !!int nope\n", "cannot read 'nope'"),
    ],
)
def test_reader_refusals_are_located(text: str, message: str) -> None:
    with pytest.raises(yaml.YAMLError) as exc:
        safeyaml.load(text)
    assert message in str(getattr(exc.value, "problem", ""))
    assert getattr(exc.value, "problem_mark", None) is not None


def _models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    found = {model.__name__: model}
    for field in model.model_fields.values():
        for tp in _flatten(field.annotation):
            if isinstance(tp, type) and issubclass(tp, BaseModel) and tp.__name__ not in found:
                found.update(_models(tp))
    return found


def _flatten(tp: object) -> list[object]:
    args = typing.get_args(tp)
    return [tp, *(x for a in args for x in _flatten(a))]


def test_every_bound_names_a_real_spec_field() -> None:
    models = _models(Spec)
    for owner, field in [*limits.BOUNDS, *limits.MAX_TEXT]:
        assert owner in models and field in models[owner].model_fields, (owner, field)
        assert limits.BOUNDS.get((owner, field), limits.Bound(0, 1, "x")).why


def test_the_gpu_limit_is_the_sizing_engines_search_ceiling() -> None:
    from generator.sizing.engine import MAX_NODES

    assert limits.MAX_GPUS == MAX_NODES * 8


def test_schema_shows_the_bounds() -> None:
    schema = limits.annotate_schema(Spec.model_json_schema())
    gpus = schema["$defs"]["Hardware"]["properties"]["gpus"]["anyOf"][0]
    assert gpus["maximum"] == limits.MAX_GPUS


@pytest.mark.parametrize(
    ("section", "field", "ok", "bad"),
    [
        ("hardware", "gpus", 32_768, 32_769),
        ("hardware", "hot_spares", 512, 513),
        ("facility", "rack_power_kw", 1000, 1000.5),
        ("storage", "checkpoint_write_seconds", 1, 0.5),
    ],
)
def test_bounds_are_inclusive(section: str, field: str, ok: float, bad: float) -> None:
    validate_data({**BASE, section: {field: ok}}, "s.yaml", {})
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, section: {field: bad}}, "s.yaml", {})
    assert exc.value.problems[0].path == f"{section}.{field}"


def test_pinned_layout_product_is_bounded() -> None:
    w = {**BASE["workloads"][0], "parallelism": {"tp": 256, "pp": 256, "dp": 2}}
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, "workloads": [w]}, "s.yaml", {})
    (p,) = exc.value.problems
    assert (p.path, p.message) == ("workloads[0].parallelism",
                                   "the pinned sizes multiply to 131,072 GPUs")


def test_compute_nodes_are_bounded_per_server() -> None:
    spec = Spec.model_validate({**BASE, "hardware": {"gpus": 16_388}})
    (v,) = limits.node_violations(spec, 4)
    assert v.message == "16,388 GPUs need 4,097 servers of 4 GPUs"
    assert limits.node_violations(spec, 8) == []


def test_messages_speak_the_users_words() -> None:
    assert format_path(("workloads", 0, "parallelism", "tp")) == "workloads[0].parallelism.tp"
    assert [show(v) for v in (True, None, "x", float("inf"), [1], {}, 10**400)] == [
        "true", "nothing (null)", "'x'", ".inf", "a list", "a mapping", "a 401-digit number"]
    hot = Hardware.model_fields["hot_spares"]
    assert describe(hot.annotation, "Hardware", "hot_spares", hot) == (
        "a whole number from 0 to 512 or 'auto'")


LLAMA_SHAPE = {"name": "my-8b", "layers": 32, "hidden_size": 4096, "attention_heads": 32,
               "kv_heads": 8, "ffn_hidden_size": 14336, "vocab_size": 128256}


def _inline(model: dict[str, object]) -> dict[str, object]:
    return {**BASE, "workloads": [{**BASE["workloads"][0], "model": model}]}


def test_an_inline_model_that_is_not_gelu_shaped_must_say_its_mlp() -> None:
    # gelu was assumed silently: this Llama 3 8B shape was sized as 6.2 B parameters
    with pytest.raises(PodplanError) as exc:
        validate_data(_inline(LLAMA_SHAPE), "s.yaml", {})
    (p,) = exc.value.problems
    assert p.path == "workloads[0].model"
    assert "mlp is required when ffn_hidden_size (14336) is not 4 x hidden_size" in p.message
    validate_data(_inline({**LLAMA_SHAPE, "mlp": "swiglu"}), "s.yaml", {})


def test_an_inline_gelu_default_is_a_note() -> None:
    from generator.catalog.load import default_catalog
    from generator.sizing.engine import size

    gpt = {"name": "my-gpt", "layers": 4, "hidden_size": 512, "attention_heads": 8,
           "vocab_size": 1000}
    notes = size(Spec.model_validate(_inline(gpt)), default_catalog()).notes
    assert any(n.startswith("model my-gpt: no mlp given, so gelu") for n in notes)
    explicit = size(Spec.model_validate(_inline({**gpt, "mlp": "gelu"})), default_catalog())
    assert not any("no mlp given" in n for n in explicit.notes)


@pytest.mark.parametrize(("key", "meant"), [
    ("activation", "mlp"), ("hidden_act", "mlp"), ("intermediate_size", "ffn_hidden_size"),
    ("num_key_value_heads", "kv_heads"), ("num_hidden_layers", "layers")])
def test_hugging_face_config_names_suggest_the_spec_field(key: str, meant: str) -> None:
    # 'activation' was answered with "did you mean 'attention'?"
    model = {**LLAMA_SHAPE, "mlp": "swiglu", key: 1}
    with pytest.raises(PodplanError) as exc:
        validate_data(_inline(model), "s.yaml", {})
    hints = [p.hint for p in exc.value.problems if p.path.endswith(key)]
    assert hints == [f"did you mean '{meant}'?"]


def test_a_short_catalog_id_suggests_the_ids_it_starts() -> None:
    # 'gpu: h100' and 'gpu: h200' were refused with no hint at all
    from generator.spec.messages import did_you_mean

    gpus = ["a100-sxm-80gb", "h100-nvl-94gb", "h100-pcie-80gb", "h100-sxm-80gb", "h200-sxm-141gb"]
    assert did_you_mean("h200", gpus) == "did you mean 'h200-sxm-141gb'?"
    assert did_you_mean("H100", gpus) == (
        "did you mean one of 'h100-nvl-94gb', 'h100-pcie-80gb', 'h100-sxm-80gb'?")


def test_a_fields_own_check_also_says_what_the_field_takes() -> None:
    # 'hot_spares must be >= 0 or auto' came without the allowed line every other error has
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, "hardware": {"hot_spares": -1}}, "s.yaml", {})
    (p,) = exc.value.problems
    assert p.allowed == "a whole number from 0 to 512 or 'auto'"
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, "hardware": {"remove_nodes": ["gpu1", "gpu1"]}}, "s.yaml", {})
    assert exc.value.problems[0].allowed is None  # 'a list, each item text' says nothing


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("training", "a training run is one of: pretrain (from scratch), sft (full "
                     "fine-tuning), lora or ptuning"),
        ("fine-tune", "did you mean 'sft' (full fine-tuning) or 'lora'?"),
        ("Serving", "did you mean 'inference'?"),
        ("qlora", "did you mean 'lora'?"),
        ("pretraining", "did you mean 'pretrain'?"),
        ("sfft", "did you mean 'sft'?"),
    ],
)
def test_a_kind_in_other_words_gets_the_right_hint(kind: str, hint: str) -> None:
    # spelling distance sent 'training' to 'ptuning', and 'fine-tune' and 'serving' nowhere
    w = {**BASE["workloads"][0], "kind": kind}
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, "workloads": [w]}, "s.yaml", {})
    (p,) = exc.value.problems
    assert (p.path, p.message, p.hint) == ("workloads[0].kind", f"unknown kind '{kind}'", hint)


def test_an_electricity_price_in_cents_is_refused() -> None:
    # 12 (cents) was taken as 12 USD per kWh: 100x the power cost, without a word
    with pytest.raises(PodplanError) as exc:
        validate_data({**BASE, "facility": {"power_usd_per_kwh": 12}}, "s.yaml", {})
    (p,) = exc.value.problems
    assert (p.path, p.message, p.allowed) == (
        "facility.power_usd_per_kwh", "12 is more than 2",
        "0 to 2 (USD per kWh, not cents: the dearest grid power costs under 1 USD)")

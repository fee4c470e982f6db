"""The spec model: defaults, cross-field rules, and what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from generator.spec.models import InferenceWorkload, InlineArchitecture, Spec, TrainingWorkload


def spec(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "t",
        "workloads": [{"name": "w", "kind": "lora", "model": "llama2-7b", "steps": 10}],
    }
    base.update(over)
    return base


def test_defaults_fill_a_minimal_spec() -> None:
    s = Spec.model_validate(spec())
    w = s.workloads[0]
    assert isinstance(w, TrainingWorkload)
    assert (w.sequence_length, w.global_batch_size, w.micro_batch_size) == (4096, 128, None)
    assert s.hardware.server == "xe9680" and s.hardware.east_west_nics_per_node is None
    assert [c.value for c in s.provisioning.clouds] == ["aws", "gcp", "azure"]
    assert s.provisioning.scheduler.value == "slurm"


def test_inference_workload_is_discriminated_by_kind() -> None:
    s = Spec.model_validate(spec(workloads=[{
        "name": "c", "kind": "inference", "model": "llama3-8b",
        "input_tokens": 10, "output_tokens": 20,
    }]))
    assert isinstance(s.workloads[0], InferenceWorkload)
    assert s.inference and not s.training


@pytest.mark.parametrize("work", [{}, {"steps": 1, "tokens": 2.0}])
def test_exactly_one_kind_of_work(work: dict[str, Any]) -> None:
    w = {"name": "w", "kind": "sft", "model": "llama2-7b", **work}
    with pytest.raises(ValidationError, match="exactly one of steps"):
        Spec.model_validate(spec(workloads=[w]))


def test_inference_keys_are_refused_on_training() -> None:
    w = {"name": "w", "kind": "sft", "model": "x", "steps": 1, "input_tokens": 3}
    with pytest.raises(ValidationError, match="Extra inputs"):
        Spec.model_validate(spec(workloads=[w]))


def test_gbs_must_divide_by_mbs() -> None:
    w = {"name": "w", "kind": "sft", "model": "x", "steps": 1,
         "global_batch_size": 10, "micro_batch_size": 4}
    with pytest.raises(ValidationError, match="multiple of micro_batch_size"):
        Spec.model_validate(spec(workloads=[w]))


def test_inline_architecture_defaults_and_checks() -> None:
    a = InlineArchitecture(name="m", layers=2, hidden_size=64, attention_heads=4, vocab_size=10)
    assert a.kv_heads is None and a.mlp.value == "gelu" and a.experts == 1
    with pytest.raises(ValidationError, match="divisible by attention_heads"):
        InlineArchitecture(name="m", layers=2, hidden_size=65, attention_heads=4, vocab_size=10)
    with pytest.raises(ValidationError, match="ffn_hidden_size is required"):
        InlineArchitecture(
            name="m", layers=2, hidden_size=64, attention_heads=4, vocab_size=10, mlp="swiglu"
        )


def test_workload_names_unique() -> None:
    w = {"name": "w", "kind": "lora", "model": "x", "steps": 1}
    with pytest.raises(ValidationError, match="unique"):
        Spec.model_validate(spec(workloads=[w, w]))


def test_networks_must_not_overlap() -> None:
    with pytest.raises(ValidationError, match="overlap"):
        Spec.model_validate(spec(network={"oob_cidr": "10.0.0.0/16", "mgmt_cidr": "10.0.1.0/24"}))


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "10.0.0.1/8", "nonsense"])
def test_admin_cidr_refuses_world_and_garbage(cidr: str) -> None:
    with pytest.raises(ValidationError):
        Spec.model_validate(spec(provisioning={"admin_cidr": cidr}))


def test_name_pattern() -> None:
    with pytest.raises(ValidationError):
        Spec.model_validate(spec(name="Has_Caps"))


def test_hot_spares_auto_or_non_negative() -> None:
    assert Spec.model_validate(spec(hardware={"hot_spares": "auto"})).hardware.hot_spares == "auto"
    with pytest.raises(ValidationError):
        Spec.model_validate(spec(hardware={"hot_spares": -1}))

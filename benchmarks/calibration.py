"""Turn each row of ``benchmarks/data/calibration.csv`` into engine inputs, and predict it.

Mapping rules (the same for every row; no row id is special-cased):

* the row's own TP/PP/CP/VP/DP/MBS/GBS/sequence/precision/framework/GPU are pinned; a blank
  is left to the planner, which picks the fastest layout that fits, exactly as it would for
  a user (the Dell rows D1-D19 name no layout at all);
* FP16 runs are treated as bf16 (same tensor-core peak); A100 rows run on the catalog's A100
  with Selene's fabric (8x HDR 200 Gb/s per node);
* "act.ckpt=True" means full recompute, "selective" / "full" in the method are pinned;
* the metric is converted from the predicted step time: tokens/s/GPU, model TFLOP/s/GPU,
  Narayanan's TFLOP/s for his ZeRO-3 rows (his Eq. 3 always counts a full recompute forward,
  whatever the run recomputed),
  s/iteration, minutes for the row's work, or output tokens/s for inference;
* unpacked fine-tuning data (the Dell rows: 114.54 tokens/sample on average, MBS 1) is one
  sample per sequence; packed data fills the sequence.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from generator.catalog.load import Catalog, default_catalog
from generator.sizing.inference import InferenceJob, serve
from generator.sizing.model.arch import Architecture, from_catalog
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.flops import hardware_flops, model_flops
from generator.sizing.model.hardware import Device, Node, device_from_gpu
from generator.sizing.model.job import Job, peft_terms, sequence_tokens
from generator.sizing.model.params import total_params
from generator.sizing.seed import SEED_GPU_HOURS_PER_BPARAM_BTOKEN
from generator.sizing.training.layouts import Pins
from generator.sizing.training.planner import Evaluated, search_size

DATA = Path(__file__).resolve().parent / "data"
CSV_PATH = DATA / "calibration.csv"
SETUP_PATH = DATA / "calibration_setup.yaml"


@dataclass(frozen=True)
class Case:
    """One calibration row, ready for the engine."""

    id: str
    model: str
    method: str
    gpus: int
    metric: str
    measured: float
    device: Device
    node: Node
    job: Job | None = None
    pins: Pins = field(default_factory=Pins)
    inference: InferenceJob | None = None


@dataclass(frozen=True)
class Prediction:
    """What the engine says for a case."""

    value: float
    layout: str
    fits: bool
    seed: float | None


def _int(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


@cache
def _setup() -> dict[str, Any]:
    doc = yaml.safe_load(SETUP_PATH.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def architecture(name: str, catalog: Catalog) -> Architecture:
    """The row's model from the catalog or from the setup file's published config."""
    spec = _setup()["models"][name]
    if "catalog" in spec:
        return from_catalog(catalog.models[spec["catalog"]])
    return Architecture(name=name, **spec)


def _hardware(row: dict[str, str], catalog: Catalog) -> tuple[Device, Node]:
    gpu_id = "a100-sxm-80gb" if "A100" in row["gpu"] else "h100-sxm-80gb"
    return device_from_gpu(catalog.gpus[gpu_id]), Node(**_setup()["nodes"][gpu_id])


def _framework(row: dict[str, str]) -> str:
    fw = row["framework"].lower()
    if "deepspeed" in fw:
        return "deepspeed"
    if "fsdp" in fw:
        return "fsdp"
    return "nemo" if "nemo" in fw else "megatron"


def _kind(method: str) -> str:
    m = method.lower()
    if "lora" in m:
        return "lora"
    if "p-tuning" in m:
        return "ptuning"
    return "sft" if "sft" in m else "pretrain"


def _recompute(row: dict[str, str]) -> str | None:
    text = (row["method"] + " " + row["work"]).lower()
    if "act.ckpt=true" in text or "full recompute" in text:
        return "full"
    if "act.ckpt=false" in text:
        return "none"
    return "selective" if "selective" in text else None


def _metric(row: dict[str, str]) -> tuple[str, float]:
    unit, value = row["unit"].lower(), row["value"]
    first = float(value.split(";")[0])
    if "minutes" in unit:
        return "minutes", first
    if "s/iteration" in unit:
        return "s_iter", first
    if "output tokens" in unit:
        return "out_tok_s", first
    if "tflop" in unit:
        return ("tflops_hw" if "zero-3" in row["method"].lower() else "tflops_model"), first
    return "tok_s_gpu", first


def _training_case(row: dict[str, str], catalog: Catalog, eff: Efficiency) -> Case:
    arch = architecture(row["model"], catalog)
    kind = _kind(row["method"])
    lora_rank = _int(row["method"].split("r=")[1]) if "r=" in row["method"] else None
    adapters, extra = peft_terms(arch, kind, eff.peft, lora_rank)
    seq = _int(row["seq_len"]) or 4096
    unpacked = "avg" in row["seq_len"]
    sample_tokens = float(re.findall(r"avg ([\d.]+)", row["seq_len"])[0]) if unpacked else None
    gbs = _int(row["GBS"]) or 1
    metric, measured = _metric(row)
    steps = 1000 if unpacked else 1
    if row["id"] == "17" or "samples to target" in row["notes"]:
        steps = math.ceil((_int(row["notes"].split(";")[-1]) or 0) / gbs)
    job = Job(
        name=row["id"], arch=arch, kind=kind,
        precision="fp8" if "FP8" in row["precision"] else "bf16",
        framework=_framework(row), global_batch=gbs, seq_len=seq, steps=steps,
        sample_tokens=sample_tokens, extra_tokens=extra, adapter_params=adapters,
    )
    pins = Pins(
        tp=_int(row["TP"]), pp=_int(row["PP"]), dp=_int(row["DP"]), cp=_int(row["CP"]),
        vp=_int(row["VP"]), mbs=_int(row["MBS"]), recompute=_recompute(row),
    )
    device, node = _hardware(row, catalog)
    return Case(row["id"], row["model"], row["method"], int(row["num_gpus"]), metric, measured,
                device, node, job=job, pins=pins)


def _inference_case(row: dict[str, str], catalog: Catalog) -> Case:
    isl, osl = (int(x) for x in re.findall(r"ISL/OSL=(\d+)/(\d+)", row["method"])[0])
    device, node = _hardware(row, catalog)
    job = InferenceJob(
        arch=architecture(row["model"], catalog), precision="fp8" if "FP8" in row["precision"]
        else "bf16", input_tokens=isl, output_tokens=osl,
    )
    return Case(row["id"], row["model"], row["method"], int(row["num_gpus"]), "out_tok_s",
                float(row["value"]), device, node, pins=Pins(tp=_int(row["TP"])), inference=job)


def load_rows() -> list[dict[str, str]]:
    """Every row of the calibration file, as text."""
    with CSV_PATH.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def load_cases(eff: Efficiency, catalog: Catalog | None = None) -> list[Case]:
    """Every calibration row as a ``Case``."""
    cat = catalog or default_catalog()
    out = []
    for row in load_rows():
        if row["category"].startswith("inference"):
            out.append(_inference_case(row, cat))
        else:
            out.append(_training_case(row, cat, eff))
    return out


def _layout_text(e: Evaluated) -> str:
    lay = e.layout
    parts = [f"TP{lay.tp}", f"PP{lay.pp}", f"DP{lay.dp}"]
    if lay.cp > 1:
        parts.append(f"CP{lay.cp}")
    if lay.vp > 1:
        parts.append(f"VP{lay.vp}")
    parts.append(f"MBS{lay.mbs}")
    if lay.recompute != "none":
        parts.append(f"rc={lay.recompute}" + (f"{lay.recompute_layers}" if lay.recompute_layers
                                               else ""))
    return " ".join(parts)


def convert(case: Case, e: Evaluated) -> float:
    """The row's metric from an evaluated layout."""
    job = case.job
    assert job is not None
    step = e.step_s
    seq = sequence_tokens(job, e.layout.mbs)
    tok_s_gpu = job.global_batch * seq / (step * e.layout.gpus)
    if case.metric == "tok_s_gpu":
        return tok_s_gpu
    if case.metric == "tflops_model":
        return model_flops(job.arch, job.kind, seq, job.adapter_params).total * tok_s_gpu / 1e12
    if case.metric == "tflops_hw":  # Narayanan's Eq. 3: counts a full recompute forward
        flops = hardware_flops(job.arch, job.kind, seq, "full", job.adapter_params)
        return flops.total * tok_s_gpu / 1e12
    if case.metric == "s_iter":
        return step
    return job.steps * step / 60.0


def seed_value(case: Case) -> float | None:
    """The seed's 13.3 A100-hours per (B params x B tokens) rule in the row's metric."""
    if case.job is None:
        return None
    job = case.job
    params_b = total_params(job.arch) / 1e9
    tok_s_gpu = 1e9 / (params_b * SEED_GPU_HOURS_PER_BPARAM_BTOKEN * 3600)
    seq = job.sample_tokens or job.seq_len
    if case.metric == "tok_s_gpu":
        return tok_s_gpu
    if case.metric in ("tflops_model", "tflops_hw"):
        return model_flops(job.arch, job.kind, seq).total * tok_s_gpu / 1e12
    if case.metric == "s_iter":
        return job.global_batch * seq / (case.gpus * tok_s_gpu)
    return job.steps * job.global_batch * seq / (case.gpus * tok_s_gpu) / 60.0


def predict(case: Case, eff: Efficiency) -> Prediction:
    """Run the engine on one case."""
    if case.inference is not None:
        out = serve(case.inference, case.device, case.node, eff, tp=case.pins.tp)
        return Prediction(out.tokens_per_s, f"TP{out.tp} batch {out.batch}", out.fits, None)
    assert case.job is not None
    res = search_size(case.job, case.gpus, case.device, case.node, eff, case.pins)
    best = res.best or res.tightest
    if best is None:
        return Prediction(float("nan"), "no valid layout", False, seed_value(case))
    return Prediction(convert(case, best), _layout_text(best), best.fits, seed_value(case))

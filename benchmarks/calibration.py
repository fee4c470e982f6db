"""Turn each row of ``benchmarks/data/calibration.csv`` into engine inputs, and predict it.

Mapping rules (the same for every row; no row id is special-cased):

* the row's own TP/PP/CP/VP/DP/MBS/GBS/sequence/precision are pinned; a blank is left to
  the planner, which picks the fastest layout that fits, exactly as it would for a user
  (the Dell rows D1-D19 name no layout at all). A blank GBS is one sequence per
  data-parallel rank;
* the software stack (``stacks.py``) maps the row's framework text to a profile: the four a
  user can choose, or a calibration stack that differs from one of them by a feature (2021
  Megatron without TP overlap or fused attention, torchtitan with sequence parallelism,
  IBM's fms-fsdp with partial block checkpointing ...);
* GPU and node fabric come from ``calibration_setup.yaml`` (``rows:`` -> ``fabrics:``; Meta's
  500 W H100 HBM2e variant runs at the peak its publisher states, half-way between the
  catalog's SXM and NVL);
  rows before T001 ran on DGX H100 (8x NDR 400) or Selene's DGX A100 (8x HDR 200); a fabric
  the publication did not state is taken as its GPU's standard (8x 400 Gb/s; A100 8x 200);
* FP16 runs are treated as bf16 (same tensor-core peak); "act.ckpt=True", "full recompute"
  or "full AC" mean full recompute, "act.ckpt=False" none, "selective" (Megatron's) is
  pinned; torchtitan's op-level selective AC saves every matmul and attention output and
  only recomputes element-wise ops, so it is timed as no recompute;
* the metric is converted from the predicted step time: tokens/s/GPU, model TFLOP/s/GPU,
  Narayanan's TFLOP/s for his ZeRO-3 rows (his Eq. 3 always counts a full recompute forward,
  whatever the run recomputed), s/iteration, minutes for the row's work, or output tokens/s
  for inference;
* unpacked fine-tuning data (the Dell rows: 114.54 tokens/sample on average, MBS 1) is one
  sample per sequence; packed data fills the sequence;
* MoE rows (M1-M24) carry their expert layout as ``key=value`` tokens in ``method``
  (SOURCES-moe-inference.md): ``EP=<n>`` and ``ETP=<n>`` are pinned (``EP=unstated`` is
  left to the planner, ETP then follows the planner's rule), ``FSDP=<n>`` is the FSDP
  shard group; routing is dropless and force-balanced (capacity factor 1). MoE
  architectures come from the catalog, or from ``moe_models.yaml`` for models the catalog
  does not carry ({moe: id}). B200 rows run on the catalog's B200; DeepSeek's H800 is an
  H100 whose NVLink is cut to 400 GB/s (200 GB/s per direction);
* a training row that a newer software release of the same publication re-measured (same
  model, GPU, GPU count, precision and sequence length) is superseded: kept in the file,
  printed with its error, neither fitted nor scored (``superseded.py`` states why).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import yaml

from benchmarks.calibration_hardware import SETUP_PATH as SETUP_PATH
from benchmarks.calibration_hardware import _hardware as _hardware
from benchmarks.calibration_hardware import _setup as _setup
from benchmarks.stacks import (
    ep_overlap_full_of,
    ep_overlap_of,
    local_batches_of,
    lora_targets,
    microbatch_of,
    moe_dispatcher_of,
    pipeline_split_of,
    recompute_layers_of,
    recompute_modules_of,
    recompute_of,
    routing_of,
    shard_of,
    stack_of,
)
from benchmarks.superseded import superseded
from generator.catalog.load import Catalog, default_catalog
from generator.sizing.inference import InferenceJob
from generator.sizing.model.arch import Architecture, from_catalog, from_inline
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.flops import hardware_flops, model_flops
from generator.sizing.model.hardware import Device, Node
from generator.sizing.model.job import Job, peft_terms, sequence_tokens
from generator.sizing.model.params import total_params
from generator.sizing.seed import SEED_GPU_HOURS_PER_BPARAM_BTOKEN
from generator.sizing.training.layouts import Pins
from generator.sizing.training.planner import Evaluated, search_size
from generator.sizing.uncertainty import Regime
from generator.spec.models import InlineArchitecture

DATA = Path(__file__).resolve().parent / "data"
CSV_PATH = DATA / "calibration.csv"
MOE_MODELS_PATH = DATA / "moe_models.yaml"
RATE_METRICS = ("tok_s_gpu", "tflops_model", "tflops_hw", "out_tok_s")
"""Metrics that grow with speed; every other one (s/iteration, minutes, TPOT/TTFT ms) with time."""


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
    source: str = ""
    """The publication, normalised: the leave-one-source-out group."""
    group: str = ""
    tags: tuple[str, ...] = ()
    regime: Regime | None = None
    job: Job | None = None
    pins: Pins = field(default_factory=Pins)
    inference: InferenceJob | None = None
    serving: object | None = None
    """Inference rows: layout, replicas and operating point (``calibration_inference``)."""

    @property
    def time_like(self) -> bool:
        """Whether the metric grows with time (s/iteration, minutes) rather than speed."""
        return self.metric not in RATE_METRICS


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


def normalise_source(source: str) -> str:
    """The publication a row comes from: lower case, no parenthetical detail; MLPerf rounds
    are one publication each (every submitter runs NVIDIA's reference implementation)."""
    text = re.sub(r"\s+", " ", source.strip().lower())
    m = re.match(r"(mlperf training v[\d.]+)", text)
    if m:
        return m.group(1)
    return re.sub(r"\s*\([^)]*\)", "", text).strip(" ,;")


def architecture(name: str, catalog: Catalog) -> Architecture:
    """The row's model from the catalog, ``moe_models.yaml`` or the setup file's config."""
    spec = _setup()["models"][name]
    if "catalog" in spec:
        return from_catalog(catalog.models[spec["catalog"]])
    if "moe" in spec:
        return from_inline(_moe_model(spec["moe"]))
    return Architecture(name=name, **spec)


MOE_FIELDS = {"expert_ffn_hidden_size": "ffn_hidden_size", "qk_nope_head_dim": "head_dim"}
MOE_KEEP = frozenset(InlineArchitecture.model_fields) - {"ffn_hidden_size"}


@cache
def _moe_model(model_id: str) -> InlineArchitecture:
    """An entry of moe_models.yaml as an inline architecture (its field names are the
    spec's, with the expert width and MLA's non-rotary head width renamed)."""
    doc = yaml.safe_load(MOE_MODELS_PATH.read_text(encoding="utf-8"))
    item = dict(doc["items"][model_id])
    fields = {MOE_FIELDS.get(k, k): v for k, v in item.items()
              if k in MOE_FIELDS or k in MOE_KEEP}
    return InlineArchitecture.model_validate(
        {k: v for k, v in fields.items() if v not in (0, None) or k == "shared_experts"})


def _kind(method: str) -> str:
    m = method.lower()
    if "lora" in m:
        return "lora"
    if "p-tuning" in m:
        return "ptuning"
    return "sft" if "sft" in m else "pretrain"


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


def _tags(row: dict[str, str]) -> tuple[str, ...]:
    m = re.match(r"\[tags: ([^\]]*)\]", row["notes"])
    return tuple(t.strip() for t in m.group(1).split(",")) if m else ()


def _token(method: str, key: str) -> int | None:
    """The integer of a ``key=<n>`` method token (None when absent or not a number)."""
    m = re.search(rf"\b{key}=(\d+)", method)
    return int(m.group(1)) if m else None


def _steps(row: dict[str, str], gbs: int, unpacked: bool) -> int:
    """Optimizer steps of the row's work (only time-to-train rows need the real count)."""
    if "samples to target" in row["notes"]:
        return math.ceil((_int(row["notes"].split(";")[-1]) or 0) / gbs)
    return 1000 if unpacked else 1


def row_architecture(row: dict[str, str], catalog: Catalog) -> Architecture:
    """The row's model, with the fields its benchmark changed (the setup file's
    ``model_overrides``: MLPerf's GPT-OSS 20B runs the Llama 3 vocabulary)."""
    arch = architecture(row["model"], catalog)
    changed = _setup().get("model_overrides", {}).get(row["id"])
    return replace(arch, **changed) if changed else arch


def _training_case(row: dict[str, str], catalog: Catalog, eff: Efficiency) -> Case:
    arch = row_architecture(row, catalog)
    kind = _kind(row["method"])
    stack = stack_of(row)
    lora_rank = _int(row["method"].split("r=")[1]) if "r=" in row["method"] else None
    targets = lora_targets(row)
    peft = replace(eff.peft, lora_targets=targets) if targets else eff.peft
    adapters, extra = peft_terms(arch, kind, peft, lora_rank)
    seq = _int(row["seq_len"]) or 4096
    unpacked = "avg" in row["seq_len"]
    sample_tokens = float(re.findall(r"avg ([\d.]+)", row["seq_len"])[0]) if unpacked else None
    dp, mbs = _int(row["DP"]), _int(row["MBS"])
    gbs = _int(row["GBS"]) or (dp or 1) * (mbs or 1)
    metric, measured = _metric(row)
    precision = "fp8" if "FP8" in row["precision"] else "bf16"
    job = Job(
        name=row["id"], arch=arch, kind=kind, precision=precision, framework=stack,
        global_batch=gbs, seq_len=seq, steps=_steps(row, gbs, unpacked),
        sample_tokens=sample_tokens, extra_tokens=extra, adapter_params=adapters,
        recompute_modules=recompute_modules_of(row), pipeline_split=pipeline_split_of(row),
        moe_dispatcher=moe_dispatcher_of(row), ep_overlap=ep_overlap_of(row),
        ep_overlap_full=ep_overlap_full_of(row),
        routing=routing_of(row), local_batches=local_batches_of(row),
    )
    device, node = _hardware(row, catalog)
    tp, pp = _int(row["TP"]), _int(row["PP"])
    pins = Pins(tp=tp, pp=pp, dp=dp, cp=_int(row["CP"]), vp=_int(row["VP"]),
                mbs=mbs or microbatch_of(row, stack, gbs, dp, pp or 1),
                recompute=recompute_of(row), shard=shard_of(row, node, tp or 1, dp),
                recompute_layers=recompute_layers_of(row, arch.layers, pp or 1),
                ep=_token(row["method"], "EP"), etp=_token(row["method"], "ETP"))
    gpus = int(row["num_gpus"])
    family = eff.framework(stack).family
    return Case(row["id"], row["model"], row["method"], gpus, metric, measured, device, node,
                source=normalise_source(row["source"]), group=row["category"],
                tags=_tags(row),
                regime=Regime.of(family, kind, gpus, device.id, sample_tokens, arch.moe),
                job=job,
                pins=pins)


def load_rows() -> list[dict[str, str]]:
    """Every row of the calibration file, as text."""
    with CSV_PATH.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def is_inference(row: dict[str, str]) -> bool:
    return row["category"].startswith("inference")


def load_cases(eff: Efficiency, catalog: Catalog | None = None) -> list[Case]:
    """Every calibration row the engine can express, as a ``Case`` (``unscored_rows`` lists
    the others, with the reason)."""
    cases, _ = _split_rows(eff, catalog or default_catalog())
    return cases


def unscored_rows(eff: Efficiency, catalog: Catalog | None = None) -> list[tuple[str, str]]:
    """(row id, why the engine cannot express it yet) for every row left out."""
    _, skipped = _split_rows(eff, catalog or default_catalog())
    return skipped


def superseded_rows() -> dict[str, str]:
    """Training row id -> the newer row of the same job that supersedes it
    (``benchmarks/superseded.py``: the rule, and why)."""
    rows = [r for r in load_rows() if not is_inference(r)]
    return superseded(rows, {r["id"]: normalise_source(r["source"]) for r in rows})


def superseded_cases(eff: Efficiency, catalog: Catalog | None = None) -> list[tuple[Case, str]]:
    """(case, id of the row superseding it) for every superseded row: printed with their
    error by ``benchmarks.accuracy``, never fitted or scored."""
    newer = superseded_rows()
    cat = catalog or default_catalog()
    return [(_training_case(row, cat, eff), newer[row["id"]]) for row in load_rows()
            if row["id"] in newer]


def _split_rows(eff: Efficiency, cat: Catalog) -> tuple[list[Case], list[tuple[str, str]]]:
    from benchmarks.calibration_inference import Unscored, inference_case

    cases: list[Case] = []
    skipped: list[tuple[str, str]] = []
    newer = superseded_rows()
    for row in load_rows():
        if row["id"] in newer:
            skipped.append((row["id"], f"superseded by {newer[row['id']]} (the same job "
                                       "measured with a newer release of the same stack)"))
            continue
        try:
            if is_inference(row):
                cases.append(inference_case(row, cat))
            else:
                cases.append(_training_case(row, cat, eff))
        except Unscored as why:
            skipped.append((row["id"], str(why)))
    return cases, skipped


def _layout_text(e: Evaluated) -> str:
    lay = e.layout
    parts = [f"TP{lay.tp}", f"PP{lay.pp}", f"DP{lay.dp}"]
    if lay.cp > 1:
        parts.append(f"CP{lay.cp}")
    if lay.vp > 1:
        parts.append(f"VP{lay.vp}")
    if lay.shard and lay.shard < lay.dp:
        parts.append(f"SH{lay.shard}")
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
        from benchmarks.calibration_inference import predict_inference

        return predict_inference(case, eff)
    assert case.job is not None
    res = search_size(case.job, case.gpus, case.device, case.node, eff, case.pins)
    best = res.best or res.tightest
    if best is None:
        return Prediction(float("nan"), "no valid layout", False, seed_value(case))
    return Prediction(convert(case, best), _layout_text(best), best.fits, seed_value(case))

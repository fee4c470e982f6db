"""Inference rows of calibration.csv as engine inputs, and their predictions.

The row conventions are those of ``benchmarks/data/SOURCES-moe-inference.md``: ``method``
carries ``key=value`` tokens (``ISL/OSL=``, ``mode=``, ``qps=``, ``EP=``, ``spec=``,
``phase=``); ``unit`` says what ``value`` counts. Mapping rules (the same for every row):

* **operating point** from ``mode``: ``offline-max-throughput`` and ``online-saturated``
  run at the largest batch the KV cache admits; ``server-slo`` (MLPerf Server) at the
  largest batch meeting its SLO (p99 TTFT <= 2 s, TPOT <= 200 ms, taken on the model's
  mean latencies); ``online-low-load`` at the concurrency Little's law gives for its
  request rate (c = qps x (TTFT + OSL x TPOT), solved as a fixed point); ``static-batch``
  (``conc=`` sequences prefilled together, then decoded to the end) as a closed burst;
  an offline run whose request count the source states (the performance overview's
  dataset table, ``PERF_OVERVIEW_REQUESTS``) as that finite run, tail wave included
  (``run_point``);
* **metric**: output tokens/s of the whole measured system (replicas = GPUs / (TP x PP)),
  or TPOT / TTFT in ms at that operating point;
* **layout**: the row's TP and PP (and ``attnDP=on``: attention data-parallel over the TP
  GPUs, ``Layout.attn_dp``; ``attnDP=unclear`` is scored as TP, see the sources file);
  DP rows are that many independent replicas; the KV fraction the run states
  (``kv_cache_free_gpu_mem_fraction 0.95``) replaces the engine's default; FP8 rows store
  weights in 1 byte, the KV cache in the dtype the precision column states (``KV FP8`` /
  ``KV BF16``; unstated: the engine's default, ``InferenceJob.kv_bytes``);
* **engine limits**: ``max_batch_size`` / ``max_num_tokens`` where the notes state them;
  else, for trtllm-bench runs, the values trtllm-bench derives itself (``bench_limits``);
  else the engine's defaults (efficiency.yaml);
* **GPU**: the row's GPU text (H100 / H200), or ``calibration_setup.yaml``'s mapping.

Rows the engine cannot express yet are *not scored* and are listed with the reason
(``unscored``): FP4 weights (no FP4 model), speculative
decoding (``spec=MTP3``), disaggregated prefill/decode pools, runs with CUDA graphs
disabled (``cudagraph=off``: host-launched kernels), SGLang releases before
v0.4.1.post2 (``EARLY_SGLANG``), and MLPerf datasets
whose mean input length is not published. MoE architectures come from the catalog or
``moe_models.yaml`` (``calibration.architecture``), MLA with its latent KV cache.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from benchmarks.calibration import (
    Case,
    Prediction,
    _hardware,
    _int,
    _tags,
    architecture,
    normalise_source,
)
from generator.catalog.load import Catalog
from generator.sizing.inference import (
    InferenceJob,
    Layout,
    Point,
    cycle_s,
    latency_point,
    loaded_point,
    max_batch,
    slo_batch,
)
from generator.sizing.inference.memory import hbm_bytes
from generator.sizing.model.efficiency import Efficiency
from generator.sizing.model.hardware import Device
from generator.sizing.model.params import total_params
from generator.sizing.uncertainty import Regime

SERVING_STACK = "tensorrt-llm"
LONG_INPUT = 8192
MLPERF_DATASETS = {"mlperf-llama2-70b": 294.0}
"""Mean prompt tokens of an MLPerf dataset (the result logs give only the output side).
Llama 2 70B (OpenOrca, 24,576 samples): 294 tokens per MLCommons' description of the task
[R: recalled, not re-read here]. The Mixtral mix (OpenOrca + GSM8K + MBXP) has no published
mean here, so its rows are not scored."""
PERF_OVERVIEW_REQUESTS = {
    (128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500,
    (2048, 128): 3000, (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000,
    (500, 2000): 3000, (20000, 2000): 1000,
}
"""``$num_requests`` per (ISL, OSL) of the TensorRT-LLM performance overview's datasets
(its "Preparing a Dataset" table; the same figures in the v0.17 edition, commit 258c7540,
and the v1.0 one, commit 00f37686, which adds 1000/2000). trtllm-bench reports
``total_output_tokens / total_latency`` over the whole run
(``bench/dataclasses/statistics.py``, ``token_throughput_ns``), so the run's tail counts."""
EARLY_SGLANG = re.compile(r"SGLang v0\.(?:[0-3]\.\d+|4\.0|4\.1)(?![.\d])")
"""SGLang releases before v0.4.1.post2 (framework column ``SGLang v0.4.1 ...``): the
DeepSeek-V3 rows of that release are not scored (``_refuse``)."""
SLO = {"server-slo": (2000.0, 200.0)}
"""(TTFT ms, TPOT ms) of a mode with a latency constraint."""


class Unscored(Exception):
    """A row the engine cannot express yet; the message says why."""


@dataclass(frozen=True)
class ServingSetup:
    """What an inference row fixes beyond the job: layout, replicas, operating point."""

    layout: Layout
    replicas: int
    mode: str
    qps: float | None = None
    concurrency: int | None = None
    """Requests the benchmark keeps in flight (``conc=n``, or "all N requests at once")."""
    requests: int | None = None
    """Requests in the whole offline run, where the source states them (``run_point``)."""


def _token(method: str, key: str) -> str | None:
    m = re.search(rf"(?:^|\s){re.escape(key)}=(\S+)", method)
    return m.group(1) if m else None


def _lengths(row: dict[str, str]) -> tuple[int, float]:
    """(input tokens, output tokens): uniform ISL/OSL, or an MLPerf dataset's means."""
    m = re.search(r"ISL/OSL=(\d+)/(\d+)", row["method"])
    if m:
        return int(m.group(1)), float(m.group(2))
    ds = re.search(r"ISL/OSL=dataset\(([^)]+)\)", row["method"])
    name = ds.group(1) if ds else "?"
    if name not in MLPERF_DATASETS:
        raise Unscored(f"MLPerf dataset {name}: mean input length not published")
    out = re.search(r"mean output = [\d.]+ / [\d.]+ = ([\d.]+)", row["notes"])
    if not out:
        raise Unscored(f"MLPerf dataset {name}: mean output length not derived in notes")
    return int(MLPERF_DATASETS[name]), float(out.group(1))


def _metric(row: dict[str, str]) -> str:
    unit = row["unit"].lower()
    if unit.startswith("output tokens/s (whole"):
        return "out_tok_s"
    if unit.startswith("ms"):
        return "ttft_ms" if "tpot" not in unit and "per output token" not in unit else "tpot_ms"
    raise Unscored(f"metric '{row['unit']}' (per node / per user) needs a disaggregated or "
                   "speculative-decoding model")


def _refuse(row: dict[str, str]) -> None:
    method, precision = row["method"], row["precision"]
    if precision.startswith("FP4") or precision.startswith("MXFP"):
        raise Unscored("FP4 weights: no FP4 GEMM or weight model")
    if _token(method, "spec"):
        raise Unscored("speculative decoding (MTP draft layers) is not modelled")
    if _token(method, "phase"):
        raise Unscored("disaggregated prefill/decode pools are not modelled")
    if _token(method, "cudagraph") == "off":
        raise Unscored("CUDA graphs disabled (--disable-cuda-graph): every kernel is "
                       "launched from the host, a per-layer cost the serving step does not "
                       "model")
    if EARLY_SGLANG.match(row["framework"]):
        raise Unscored("SGLang release before v0.4.1.post2: DeepSeek-V3's block-FP8 "
                       "GEMM/MoE kernels untuned (PR #2643) and, with --enable-dp-attention, "
                       "the overlap scheduler off and CUDA graphs capped at batch 96 "
                       "(server_args.py); its steps are ~4-5x the model's and ~105 ms at zero "
                       "batch against ~10 ms for v0.5.7 (I81-I84), see "
                       "SOURCES-moe-inference.md, I75-I84")


def engine(row: dict[str, str]) -> str:
    """The serving engine of a row's framework column (``job.ENGINES``); SGLang rows get
    SGLang's own per-iteration time (``steps.step_overhead_s``; a prior until scored)."""
    return "sglang" if row["framework"].startswith("SGLang") else SERVING_STACK


def _kv_fraction(notes: str) -> float | None:
    m = re.search(r"(?:kv_cache_free_gpu_mem_fraction|kvcache_free_gpu_mem_frac"
                  r"|mem-fraction-static) ([\d.]+)", notes)
    return float(m.group(1)) if m else None


def _kv_dtype(precision: str) -> str | None:
    m = re.search(r"\bKV (FP8|BF16|FP16)\b|\b(FP16|BF16) KV\b", precision)
    if not m:
        return None
    return "fp8" if (m.group(1) or m.group(2)) == "FP8" else "bf16"


def _stated_limit(notes: str, key: str) -> int | None:
    m = re.search(rf"{key} (\d+)", notes)
    return int(m.group(1)) if m else None


def bench_limits(job: InferenceJob, lay: Layout, device: Device) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) trtllm-bench picks when the command gives neither
    (tensorrt_llm/bench/build/tuning.py, ``calc_engine_setting`` + ``finetune_setting``,
    read in the v0.17-v1.0 sources): the requests its own KV estimate admits at the
    dataset's ISL + OSL (all GPUs' memory less the whole checkpoint, x 0.95, KV heads
    replicated up to TP), capped at 4096 and split over PP, rounded *up* to 32/128/256
    (at least 64); tokens = that batch x (1 + ISL/OSL), capped at 32,768, at least 2048,
    rounded up to 256/512/1024. trtllm-bench leaves chunked prefill off unless asked
    (``enable_chunked_prefill`` defaults to False in ``bench/benchmark/utils/general.py``
    ``get_settings``), and then forces max_num_tokens up to the dataset's max ISL + that
    batch, so a whole prompt fits one iteration. The KV cache the runtime really
    allocates still binds."""
    arch, gib = job.arch, 1024.0 ** 3
    per_token = (2 * arch.layers * max(lay.tp, arch.kv_heads) * arch.head_dim
                 * job.kv_bytes / gib)
    memory = hbm_bytes(device) / gib * lay.gpus - total_params(arch) * job.value_bytes / gib
    requests = memory * 0.95 / (per_token * (job.input_tokens + job.output_tokens))
    raw_bs = min(requests, 4096.0) / lay.pp
    raw_tokens = min(raw_bs * (1 + job.input_tokens / job.output_tokens), 32768.0)
    if raw_bs < 256:
        batch = max(64, 32 * math.ceil(raw_bs / 32))
    else:
        step = 128 if raw_bs < 1024 else 256
        batch = step * math.ceil(raw_bs / step)
    if raw_tokens < 4096:
        tokens = max(2048, 256 * math.ceil(raw_tokens / 256))
    else:
        step = 512 if raw_tokens < 8192 else 1024
        tokens = step * math.ceil(raw_tokens / step)
    return batch, max(tokens, job.input_tokens + batch)


def _limits(row: dict[str, str], job: InferenceJob, lay: Layout,
            device: Device) -> tuple[int | None, int | None]:
    """The row's engine limits (module docstring: engine limits)."""
    notes = row["notes"]
    batch = _stated_limit(notes, "max_batch_size")
    tokens = _stated_limit(notes, "max_num_tokens")
    if batch or tokens or "trtllm-bench" not in row["framework"]:
        return batch, tokens
    return bench_limits(job, lay, device)


def _concurrency(row: dict[str, str]) -> int | None:
    conc = _int(_token(row["method"], "conc") or "")
    if conc:
        return conc
    m = re.search(r"all (\d+) requests at once", row["notes"])
    return int(m.group(1)) if m else None


def _requests(row: dict[str, str], isl: int, osl: float, mode: str) -> int | None:
    """The offline run's request count: the performance overview's dataset table."""
    if mode != "offline-max-throughput" or "perf-overview.md" not in row["url"]:
        return None
    return PERF_OVERVIEW_REQUESTS.get((isl, round(osl)))


def _group_tags(job: InferenceJob, lay: Layout, mode: str, metric: str) -> tuple[str, ...]:
    tags = ["inference MoE serving" if job.moe else f"inference dense TP{lay.tp}"]
    if metric != "out_tok_s" or mode == "online-low-load":
        tags.append("inference latency (TPOT/TTFT)")
    if job.input_tokens >= LONG_INPUT:
        tags.append("inference long input >= 8k")
    if lay.gpus > 8:
        tags.append("inference multi-node")
    tags.append(f"inference {job.precision.upper()}")
    return tuple(tags)


def inference_case(row: dict[str, str], catalog: Catalog) -> Case:
    """One inference row as a ``Case`` (raises ``Unscored`` with the reason)."""
    _refuse(row)
    metric = _metric(row)
    isl, osl = _lengths(row)
    mode = _token(row["method"], "mode") or "offline-max-throughput"
    ttft, tpot = SLO.get(mode, (None, None))
    device, node = _hardware(row, catalog)
    fp8 = row["precision"].upper().startswith("FP8") or row["precision"].startswith("FP8")
    job = InferenceJob(arch=architecture(row["model"], catalog),
                       precision="fp8" if fp8 else "bf16", input_tokens=isl,
                       output_tokens=max(1, round(osl)), ttft_ms=ttft, tpot_ms=tpot,
                       kv_fraction=_kv_fraction(row["notes"]), engine=engine(row),
                       kv_cache_dtype=_kv_dtype(row["precision"]))
    if not row["TP"] and job.moe:
        raise Unscored("MoE layout (TP/EP) not published")
    ep = _int(_token(row["method"], "EP") or "") or 1
    lay = Layout(_int(row["TP"]) or 1, _int(row["PP"]) or 1, ep,
                 attn_dp=_token(row["method"], "attnDP") == "on")
    batch, tokens = _limits(row, job, lay, device)
    job = replace(job, max_batch=batch, max_num_tokens=tokens)
    gpus = int(row["num_gpus"])
    qps = _token(row["method"], "qps")
    setup = ServingSetup(lay, max(1, gpus // lay.gpus), mode,
                         float(qps) if qps and qps.upper() != "INF" else None,
                         _concurrency(row), _requests(row, isl, osl, mode))
    tags = _tags(row) + _group_tags(job, lay, mode, metric)
    return Case(row["id"], row["model"], row["method"], gpus, metric, float(row["value"]),
                device, node, source=normalise_source(row["source"]), group=row["category"],
                tags=tags, regime=Regime.of(SERVING_STACK, "inference", gpus, device.id),
                inference=job, serving=setup)


def little_batch(case: Case, limit: int, eff: Efficiency) -> float:
    """Concurrency c = qps x (TTFT + OSL x TPOT) at request rate ``qps`` (fixed point)."""
    job, setup = case.inference, case.serving
    assert job is not None and isinstance(setup, ServingSetup) and setup.qps is not None
    c = 1.0
    for _ in range(30):
        p = loaded_point(job, setup.layout, c, case.device, case.node, eff)
        c = min(float(limit), max(1.0, setup.qps / setup.replicas
                                  * (p.ttft_s + job.output_tokens * p.tpot_s)))
    return c


def burst_point(case: Case, n: int, eff: Efficiency) -> Point:
    """A closed benchmark of ``n`` requests sent at once (the online table's QPS=INF
    point): every prompt is prefilled first, then the batch decodes to the end, so
    throughput = n * OSL / (prefill of n prompts + OSL decode cycles); TTFT is half the
    prefill on average; TPOT is the decode cycle at batch n."""
    job, setup = case.inference, case.serving
    assert job is not None and isinstance(setup, ServingSetup)
    lay, dev, node = setup.layout, case.device, case.node
    prefill = cycle_s(job, lay, 0.0, n * job.input_tokens, dev, node, eff)
    decode = cycle_s(job, lay, float(n), 0.0, dev, node, eff)
    total = prefill + job.output_tokens * decode
    return Point(n, n * job.output_tokens / total, decode, prefill / 2)


def run_point(case: Case, batch: int, requests: int, eff: Efficiency) -> Point:
    """An offline run of ``requests`` uniform requests with ``batch`` slots, timed from the
    first request to the last (trtllm-bench's throughput): the requests go through in
    waves, ``requests // batch`` full ones at the steady-state cycle and a last one of the
    remainder at its own (smaller) batch. All requests have the same lengths, so a wave's
    requests start and finish together and a freed slot is not refilled before the queue
    runs dry. Throughput = requests x OSL / (sum over waves of OSL x cycle(wave batch))."""
    job, setup = case.inference, case.serving
    assert job is not None and isinstance(setup, ServingSetup)
    lay, dev, node = setup.layout, case.device, case.node
    full, rest = divmod(requests, batch)
    top = loaded_point(job, lay, batch, dev, node, eff)
    seconds = full * job.output_tokens * top.tpot_s
    if rest:
        seconds += job.output_tokens * loaded_point(job, lay, rest, dev, node, eff).tpot_s
    return Point(top.batch, requests * job.output_tokens / seconds, top.tpot_s, top.ttft_s)


def point(case: Case, eff: Efficiency) -> tuple[Point, int]:
    """The row's operating point, and the batch limit the KV cache sets."""
    job, setup = case.inference, case.serving
    assert job is not None and isinstance(setup, ServingSetup)
    lay, dev, node = setup.layout, case.device, case.node
    limit = max_batch(job, lay, dev, eff)
    if setup.concurrency:
        limit = min(limit, max(1, setup.concurrency // setup.replicas))
    if limit < 1:
        return latency_point(job, lay, dev, node, eff), limit
    if setup.mode == "latency-batch1":
        return latency_point(job, lay, dev, node, eff), limit
    if setup.mode in ("online-saturated", "static-batch") and setup.concurrency:
        return burst_point(case, min(limit, setup.concurrency), eff), limit
    if setup.qps is not None and setup.mode == "online-low-load":
        return loaded_point(job, lay, little_batch(case, limit, eff), dev, node, eff), limit
    if job.has_slo:
        batch = max(1, slo_batch(job, lay, limit, dev, node, eff))
        return loaded_point(job, lay, batch, dev, node, eff), limit
    if setup.requests:
        return run_point(case, limit, setup.requests, eff), limit
    return loaded_point(job, lay, limit, dev, node, eff), limit


def predict_inference(case: Case, eff: Efficiency) -> Prediction:
    """The row's metric at its operating point."""
    setup = case.serving
    assert isinstance(setup, ServingSetup)
    p, limit = point(case, eff)
    value = {"out_tok_s": p.tokens_per_s * setup.replicas, "tpot_ms": p.tpot_s * 1e3,
             "ttft_ms": p.ttft_s * 1e3}[case.metric]
    text = f"{setup.layout.text()} x{setup.replicas} batch {p.batch}"
    return Prediction(value, text, limit >= 1, None)


def with_job(case: Case, **changes: object) -> Case:
    """The case with its job changed (tests: the same row under another engine rule)."""
    assert case.inference is not None
    return replace(case, inference=replace(case.inference, **changes))  # type: ignore[arg-type]

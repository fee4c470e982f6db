"""Which software stack, recompute level, LoRA targets and HSDP group a calibration row ran.

Read from the row's own words (framework, method, work and notes columns), by rules that
apply to every row alike. The stacks are profiles in ``efficiency.yaml``: the four a user
can choose (``frameworks:``) and the calibration stacks that differ from one of them by a
stated feature (``calibration_stacks:``).
"""

from __future__ import annotations

import re

from generator.sizing.model.hardware import Node

STACK_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("megatron-lm vs deepspeed",), "deepspeed-2021"),
    (("deepspeed",), "deepspeed"),
    (("torchtitan", "async"), "torchtitan-async-tp"),
    (("torchtitan",), "torchtitan"),
    (("meta internal pytorch",), "llama3-meta"),
    (("fms-fsdp",), "fms-fsdp"),
    (("hf transformers",), "hf"),
    (("automodel", "flexattn"), "automodel-flex"),
    (("automodel",), "automodel"),
    (("fsdp",), "fsdp"),
    (("llm-foundry",), "fsdp"),
    (("sync-free moe",), "megatron-sync-free-moe"),
    (("nemo",), "nemo"),
    (("megatron-core",), "megatron"),
    (("megatron-lm",), "megatron-2021"),
)
"""(words that must all appear in the framework column, profile), first match wins."""


def stack_of(row: dict[str, str]) -> str:
    """The efficiency profile of the row's software stack."""
    text = row["framework"].lower()
    for words, profile in STACK_RULES:
        if all(w in text for w in words):
            return profile
    return "megatron"


ELEMENTWISE_RECOMPUTE = ("norm/act recompute",)
"""Megatron's ``--recompute-modules layernorm moe_act``: only norms and the MoE activation
are recomputed, element-wise passes worth a few per cent of a layer's forward, so the row
is timed as no recompute; the outputs they discard are left out of its activation memory
(``Job.recompute_modules``, ``memory.discarded_bytes``)."""
OP_LEVEL_SAC = ("op-level sac", "per-op sac")
"""torchtitan's selective AC: it saves attention outputs and every second matmul's output,
so recomputing costs about half the layers' forward: timed as full recompute of half the
layers of a stage."""


def recompute_of(row: dict[str, str]) -> str | None:
    """The recompute level the row states, or None to let the planner choose."""
    text = (row["method"] + " " + row["work"]).lower()
    if any(w in text for w in OP_LEVEL_SAC):
        return "full"
    if any(w in text for w in ELEMENTWISE_RECOMPUTE):
        return "none"
    if any(w in text for w in ("act.ckpt=true", "full recompute", "full ac")):
        return "full"
    if "act.ckpt=false" in text or "recompute not enabled" in row["notes"].lower():
        return "none"
    if "partial-block" in text:
        return None  # a fraction of blocks, not published: the planner picks the fewest
    return "selective" if "selective" in text else None


def recompute_modules_of(row: dict[str, str]) -> tuple[str, ...]:
    """Megatron's element-wise recompute modules the row states (none unless it says so)."""
    text = (row["method"] + " " + row["work"]).lower()
    if any(w in text for w in ELEMENTWISE_RECOMPUTE):
        return ("layernorm", "moe_act")
    return ()


DEDUP_DISPATCHERS = ("dispatcher=deepep", "dispatcher=hybridep", "deepep", "hybridep")
"""DeepEP and HybridEP (Megatron's ``flex`` dispatcher; AutoModel's DeepEP), named in a row's
method or framework: tokens deduplicated per destination node and GPU (``comm.dispatch_bytes``)."""
EP_OVERLAP = ("a2a-overlap", "dualpipe")
"""The EP all-to-all overlapped with another micro-batch's compute: Megatron-Core's
``overlap_moe_expert_parallel_comm`` (the Bridge performance configs' ``moe_a2a_overlap``),
or DeepSeek-V3's DualPipe."""
EP_FULL_OVERLAP = ("dualpipe",)
"""Schedules whose publication states the all-to-all fully hidden: DualPipe "achieves full
overlap of forward and backward computation-communication phases" (deepseek-ai/DualPipe
README; DeepSeek-V3 technical report, section 3.2.1)."""


def moe_dispatcher_of(row: dict[str, str]) -> str:
    """The MoE token dispatcher a row states ("" where it states none: its stack's)."""
    text = (row["method"] + " " + row["framework"]).lower()
    if "dispatcher=alltoall" in text:
        return "alltoall"
    return "deepep" if any(w in text for w in DEDUP_DISPATCHERS) else ""


FAKE_GATE = ("fake balanced gate",)
"""NeMo AutoModel's ``FakeBalancedGate`` (``components/moe/layers.py``; benchmark rows state
"fake balanced gate"): without noise token t takes experts t*k ... t*k+k-1 mod E."""


def routing_of(row: dict[str, str]) -> str:
    """How the row's tokens pick experts (``Job.routing``)."""
    text = (row["work"] + " " + row["method"]).lower()
    return "contiguous" if any(w in text for w in FAKE_GATE) else "random"


def local_batches_of(row: dict[str, str]) -> int:
    """Gradient-accumulation batches per step a row states ("GA n" in its notes; 1 if none):
    pipeline schedule calls per step for stacks that run one per local batch."""
    match = re.search(r"\bGA (\d+)\b", row["notes"])
    return int(match.group(1)) if match else 1


def ep_overlap_of(row: dict[str, str]) -> bool | None:
    """True where a row states its EP all-to-all overlapped, None to take its stack's."""
    text = row["method"].lower()
    return True if any(w in text for w in EP_OVERLAP) else None


def ep_overlap_full_of(row: dict[str, str]) -> bool:
    """Whether a row's schedule states its EP all-to-all fully hidden (``EP_FULL_OVERLAP``)."""
    text = row["method"].lower()
    return any(w in text for w in EP_FULL_OVERLAP)


PIPELINE_SPLIT = (("embedding/loss in pipeline split", ("embedding", "loss")),)
"""Megatron's ``--account-for-embedding-in-pipeline-split`` and
``--account-for-loss-in-pipeline-split``, as a row's method states them
(``Job.pipeline_split``)."""


def pipeline_split_of(row: dict[str, str]) -> tuple[str, ...]:
    """The layers Megatron's pipeline split counts besides the transformer layers."""
    text = row["method"].lower()
    for words, split in PIPELINE_SPLIT:
        if words in text:
            return split
    return ()


def recompute_layers_of(row: dict[str, str], layers: int, pp: int) -> int | None:
    """Layers per stage recomputed, where a row recomputes only some (op-level SAC)."""
    text = (row["method"] + " " + row["work"]).lower()
    if any(w in text for w in OP_LEVEL_SAC):
        return max(1, -(-layers // pp) // 2)
    return None


def microbatch_of(row: dict[str, str], stack: str, gbs: int, dp: int | None, pp: int) -> int | None:
    """torchtitan's documented default when a pipelined row does not publish its micro-batch:
    as many micro-batches as pipeline stages."""
    if stack.startswith("torchtitan") and pp > 1 and dp:
        return max(1, gbs // (dp * pp))
    return None


def lora_targets(row: dict[str, str]) -> tuple[str, ...] | None:
    """LoRA on attention only (MLPerf's llama2_70b_lora: qkv + dense) or the default set."""
    text = (row["method"] + " " + row["notes"]).lower()
    if "attention (qkv + dense)" in text:
        return ("qkv", "proj")
    return None


def shard_of(row: dict[str, str], node: Node, tp: int, dp: int | None) -> int | None:
    """The ZeRO-3 shard group a row states: HSDP rows shard within a node and replicate
    across nodes; every other FSDP/ZeRO-3 row shards over all of its data-parallel ranks
    (0: FULL_SHARD; publications give the FSDP degree as DP, and ZeRO-3 "without model
    parallelism" is data parallel over every GPU). None where nothing is stated."""
    if "hsdp" in row["framework"].lower() and dp is not None:
        return max(2, node.gpus // tp)
    if dp is None and "no mp" not in row["method"].lower():
        return None
    return 0

"""Efficiency parameters as data: ``generator/catalog/data/efficiency.yaml``.

Formulas say how work turns into time; these numbers say how well real software does it
(fraction of peak a GEMM reaches, how much communication hides behind compute, fixed
overheads). They are fitted by ``benchmarks/fit.py`` on ``benchmarks/data/calibration.csv``
and kept out of the code so a refit is a data change. Plain frozen dataclasses, not pydantic,
because the planner reads them millions of times.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from generator.errors import PodplanError

EFFICIENCY_FILE = Path(str(resources.files("generator.catalog") / "data" / "efficiency.yaml"))

Sharding = Literal["distributed", "zero3"]


@dataclass(frozen=True, slots=True)
class Compute:
    """How close matrix math gets to the GPU's dense peak."""

    gemm_efficiency: dict[str, float]
    tokens_half: float
    tokens_exponent: float
    width_half: float
    fp8_speedup: float
    layer_overhead_s: float

    def peak_fraction(self, gpu_id: str) -> float:
        """Best-case fraction of peak for large GEMMs on this GPU (``default`` if unlisted)."""
        return self.gemm_efficiency.get(gpu_id, self.gemm_efficiency["default"])


@dataclass(frozen=True, slots=True)
class Memory:
    """What the formulas leave out of per-GPU memory."""

    usable_fraction: float
    overhead_gib: float
    flash_attention: bool
    zero3_live_layers: float


@dataclass(frozen=True, slots=True)
class Network:
    """Link rates and the fraction of them collectives achieve."""

    nic_gbps: float
    nvlink_efficiency: float
    fabric_efficiency: float
    collective_latency_s: float


@dataclass(frozen=True, slots=True)
class Framework:
    """A software stack's behaviour: sharding style, overlap, fixed overheads."""

    compute_scale: float
    sharding: Sharding
    grad_bytes: float
    tp_exposed: float
    dp_exposed: float
    pp_exposed: float
    cp_exposed: float
    step_overhead_s: float
    microbatch_overhead_s: float
    rail_aggregation: bool
    """Whether DP collectives spread over every rail a node's ranks own (NCCL multi-channel
    rings, as Megatron's bucketed reduce-scatter gets) or see only the rank's own NIC share
    (what DeepSpeed ZeRO-3's per-layer gathers achieved on Selene)."""


@dataclass(frozen=True, slots=True)
class Optimizer:
    """Adam's update is a memory-bound sweep over the local optimizer shard."""

    bytes_touched_per_param: float
    hbm_efficiency: float


@dataclass(frozen=True, slots=True)
class Peft:
    """Adapter defaults (NeMo/Megatron-Bridge conventions)."""

    lora_rank: int
    lora_targets: tuple[str, ...]
    ptuning_virtual_tokens: int
    ptuning_bottleneck: int


@dataclass(frozen=True, slots=True)
class Inference:
    """Serving-side efficiencies (calibrated on TensorRT-LLM max-throughput runs)."""

    hbm_efficiency: float
    prefill_efficiency: float
    decode_efficiency: float
    max_batch: int
    step_overhead_s: float
    usable_fraction: float
    overhead_gib: float


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Every efficiency parameter the sizing engine uses."""

    compute: Compute
    memory: Memory
    network: Network
    frameworks: dict[str, Framework]
    optimizer: Optimizer
    peft: Peft
    inference: Inference

    def framework(self, name: str) -> Framework:
        """Profile for ``name``; unknown names are a data error, not a silent default."""
        try:
            return self.frameworks[name]
        except KeyError:
            known = ", ".join(sorted(self.frameworks))
            raise PodplanError(f"no efficiency profile for framework '{name}' ({known})") from None


def from_mapping(doc: dict[str, Any]) -> Efficiency:
    """Build ``Efficiency`` from the YAML mapping (``fit.py`` edits the mapping and calls this)."""
    try:
        c, m, n, o, p, i = (doc[k] for k in
                            ("compute", "memory", "network", "optimizer", "peft", "inference"))
        return Efficiency(
            compute=Compute(
                gemm_efficiency={str(k): float(v) for k, v in c["gemm_efficiency"].items()},
                **{k: float(c[k]) for k in ("tokens_half", "tokens_exponent", "width_half",
                                            "fp8_speedup", "layer_overhead_s")},
            ),
            memory=Memory(float(m["usable_fraction"]), float(m["overhead_gib"]),
                          bool(m["flash_attention"]), float(m["zero3_live_layers"])),
            network=Network(**{k: float(v) for k, v in n.items()}),
            frameworks={name: _framework(f) for name, f in doc["frameworks"].items()},
            optimizer=Optimizer(**{k: float(v) for k, v in o.items()}),
            peft=Peft(int(p["lora_rank"]), tuple(p["lora_targets"]),
                      int(p["ptuning_virtual_tokens"]), int(p["ptuning_bottleneck"])),
            inference=Inference(
                max_batch=int(i["max_batch"]),
                **{k: float(v) for k, v in i.items() if k != "max_batch"},
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"efficiency data is malformed ({exc!r})"
        raise PodplanError(problem, str(EFFICIENCY_FILE)) from None


def _framework(f: dict[str, Any]) -> Framework:
    sharding = f["sharding"]
    if sharding not in ("distributed", "zero3"):
        raise ValueError(f"sharding must be distributed or zero3, not {sharding}")
    numbers = {k: float(v) for k, v in f.items() if k not in ("sharding", "rail_aggregation")}
    return Framework(sharding=sharding, rail_aggregation=bool(f["rail_aggregation"]), **numbers)


def read_mapping(path: Path = EFFICIENCY_FILE) -> dict[str, Any]:
    """The raw YAML document."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise PodplanError("efficiency data must be a mapping", str(path))
    return doc


@cache
def default_efficiency() -> Efficiency:
    """The shipped, fitted parameters."""
    return from_mapping(read_mapping())

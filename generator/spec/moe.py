"""The MoE dispatcher choices a spec may state (kept apart so that ``spec.models`` stays small)."""

from __future__ import annotations

from enum import StrEnum


class MoeDispatcher(StrEnum):
    """How a run moves MoE tokens to their experts (``parallelism.moe_dispatcher``):
    Megatron-Core's alltoall dispatcher, or its flex dispatcher with the DeepEP or HybridEP
    backend (torchtitan: ``expert_parallel_comm_backend``)."""

    alltoall = "alltoall"
    deepep = "deepep"
    hybridep = "hybridep"

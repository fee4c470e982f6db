"""Expected values of the acceptance ladder, from the plan (issue 11).

Public API: ``build_model(spec, catalog, nodes) -> AcceptanceModel`` and its
``Expectation`` rows; the nccl-tests bus-bandwidth model in ``nccl`` reuses the sizing
engine's collective model (``generator.sizing.model.collectives``).
"""

from generator.sizing.acceptance.expected import AcceptanceModel, Expectation, build_model
from generator.sizing.acceptance.nccl import OPS

__all__ = ["OPS", "AcceptanceModel", "Expectation", "build_model"]

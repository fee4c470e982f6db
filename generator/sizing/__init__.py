"""Sizing: turn workloads into parallel layouts, memory, time and a cluster size.

Public API: ``size(spec, catalog) -> SizingResult`` and ``format_table(result) -> str``.
"""

from generator.sizing.engine import size
from generator.sizing.report import format_table

__all__ = ["format_table", "size"]

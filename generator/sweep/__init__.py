"""``podplan sweep``: the same spec planned over cluster sizes, GPU types and clouds.

``grid`` reads the command-line ranges, ``run`` plans every point through the normal pipeline
(sizing, ClusterPlan, BOM) and picks the cheapest point that meets the deadline, ``formats``
writes the table, CSV, JSON or an HTML page with charts.
"""

from generator.sweep.grid import SweepGrid, parse_grid
from generator.sweep.run import SweepResult, run_sweep

__all__ = ["SweepGrid", "SweepResult", "parse_grid", "run_sweep"]

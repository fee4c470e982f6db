"""Row labels of the report's fact tables, in words with units.

``facts_table`` once labelled rows by field name ('read gbps', 'drive tb', 'it kw'): a
purchaser reads 'gbps' as gigabits while the storage figures are gigabytes per second. Fields
listed here get their label; a field a later plan adds (and this table does not know yet)
still shows, as its name and description.
"""

from __future__ import annotations

from pydantic import BaseModel

from generator.catalog.names import model_label, part_label

__all__ = ["field_label", "model_label", "part_label"]

_LABELS: dict[str, dict[str, str]] = {
    "StoragePlan": {
        "model": "Storage model",
        "nodes": "Storage nodes",
        "drive_tb": "Drive size (TB)",
        "raw_tb": "Raw capacity (TB)",
        "usable_tb": "Usable capacity (TB)",
        "required_tb": "Capacity required (TB)",
        "read_gbps": "Aggregate read (GB/s, planning estimate)",
        "write_gbps": "Aggregate write (GB/s, planning estimate)",
        "checkpoint_gb": "Checkpoint size (GB)",
        "checkpoint_write_s": "Checkpoint write time (s)",
        "nfs_server": "NFS server (clients mount from)",
        "nfs_export": "NFS export",
        "mount_point": "Mount point on the nodes",
        "required_read_gbps": "Data-loading read needed (GB/s)",
        "required_write_gbps": "Write needed (GB/s; checkpoint target or NVIDIA guidance)",
        "sized_by": "Node count set by",
    },
    "PowerSummary": {
        "it_kw": "IT power at maximum draw (kW)",
        "btu_per_hour": "Heat at maximum draw (BTU/h)",
        "facility_kw": "Facility power, IT x PUE (kW)",
        "pue": "PUE (power usage effectiveness)",
        "usd_per_kwh": "Electricity price (USD/kWh)",
        "usd_per_month": "Energy cost (USD/month)",
        "it_typical_kw": "IT power at typical draw (kW)",
        "btu_per_hour_typical": "Heat at typical draw (BTU/h)",
        "airflow_cfm": "Airflow at maximum load (CFM)",
        "weight_kg": "Weight of all racks, loaded (kg)",
        "energy_assumption": "Energy cost assumption",
    },
    "NetworkPlan": {
        "oob_cidr": "Out-of-band range",
        "mgmt_cidr": "Management range",
        "frontend_cidr": "Front-end range",
        "fabric_cidr": "Compute fabric (IPoIB) range",
        "mgmt_gateway": "Management gateway",
    },
    "Reliability": {
        "failures_per_gpu_hour": "Interruptions per GPU-hour",
        "expected_interruptions": "Interruptions expected over the run",
        "checkpoint_write_s": "Checkpoint write time (s)",
        "checkpoint_interval_hours": "Checkpoint interval, Young/Daly (h)",
        "restart_hours": "Restart after an interruption (h)",
        "goodput": "Goodput (productive share of the wall-clock)",
        "compute_hours": "Compute (h)",
        "wallclock_hours": "Wall-clock (h)",
        "spares": "Hot spare nodes",
        "checkpoint_hours": "Checkpoint writes (h)",
        "final_checkpoint_only": "Run shorter than one interval (final checkpoint only)",
    },
}


def field_label(model: type[BaseModel], name: str) -> str | None:
    """The label of ``model``'s field ``name`` (a subclass inherits its parent's), if known."""
    for cls in model.__mro__:
        if name in _LABELS.get(cls.__name__, {}):
            return _LABELS[cls.__name__][name]
    return None


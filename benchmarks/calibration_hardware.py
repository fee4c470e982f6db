"""The hardware a calibration row ran on: its GPU (as the engine's ``Device``) and node fabric.

Split from ``benchmarks.calibration`` (which re-exports ``_hardware``, ``_setup`` and
``SETUP_PATH``): rows name GPUs in prose ("H100 SXM5 80GB HBM3", "H800"), and
``data/calibration_setup.yaml`` maps rows and GPUs to published or standard fabrics; both
the training and the serving rows (``calibration_inference``) read them through here.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from generator.catalog.load import Catalog
from generator.sizing.model.hardware import Device, Node, device_from_gpu

SETUP_PATH = Path(__file__).resolve().parent / "data" / "calibration_setup.yaml"
H800_NVLINK_BYTES_PER_S = 200e9
"""H800 NVLink: 400 GB/s both ways (DeepSeek-V3 report), 200 GB/s per direction."""
STANDARD_FABRIC = {"a100-sxm-80gb": 200.0}
"""NIC line rate (Gb/s, 8 per node) where a publication does not state its fabric;
400 Gb/s for every other GPU."""


@cache
def _setup() -> dict[str, Any]:
    doc = yaml.safe_load(SETUP_PATH.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _gpu_id(row: dict[str, str]) -> str:
    mapped = _setup().get("rows", {}).get(row["id"])
    if mapped:
        return str(mapped["gpu"])
    text = row["gpu"]
    if "A100" in text:
        return "a100-sxm-80gb"
    if "B200" in text:
        return "b200-sxm-180gb"
    return "h200-sxm-141gb" if "H200" in text else "h100-sxm-80gb"


def _node(row: dict[str, str], gpu_id: str) -> Node:
    """The row's node fabric (published, or the GPU's standard one)."""
    mapped = _setup().get("rows", {}).get(row["id"])
    fabric = _setup()["fabrics"].get(mapped["fabric"], {}) if mapped else {}
    if not fabric:
        fabric = _setup()["nodes"].get(gpu_id, {})
    gpus = int(fabric.get("gpus") or 8)
    nics, gbps = fabric.get("nics"), fabric.get("nic_gbps")
    if not (nics and gbps):
        total = fabric.get("node_gbps")
        nics = gpus
        gbps = float(total) / gpus if total else STANDARD_FABRIC.get(gpu_id, 400.0)
    return Node(gpus=gpus, nics=int(nics), nic_gbps=float(gbps), nvlink_domain=gpus)


def _hardware(row: dict[str, str], catalog: Catalog) -> tuple[Device, Node]:
    gpu_id = _gpu_id(row)
    device = device_from_gpu(catalog.gpus[gpu_id])
    if gpu_id == "h100-sxm-80gb" and "HBM2e" in row["gpu"]:
        device = _meta_h100(device, device_from_gpu(catalog.gpus["h100-nvl-94gb"]))
    if "H800" in row["gpu"]:
        device = replace(device, nvlink_bytes_per_s=H800_NVLINK_BYTES_PER_S)
    return device, _node(row, gpu_id)


def _meta_h100(sxm: Device, nvl: Device) -> Device:
    """Meta's H100 SXM 96 GB HBM2e at 500 W (torchtitan's benchmarks): its publisher puts
    the peak between the SXM and the NVL, so both peaks are taken half-way."""
    fp8 = (sxm.fp8_flops + nvl.fp8_flops) / 2 if sxm.fp8_flops and nvl.fp8_flops else None
    return replace(sxm, bf16_flops=(sxm.bf16_flops + nvl.bf16_flops) / 2, fp8_flops=fp8)

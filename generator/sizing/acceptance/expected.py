"""Expected values of every acceptance rung for one plan, each with its tolerance and source.

``AcceptanceModel`` knows the design (GPU, NVLink domain, NICs per node and their rate,
planned node count, the first training workload) and answers "what should this test
measure here": GPU health from ``nvidia-smi`` (count, NVLinks per pair, rail affinity,
power limit, clocks, ECC, PCIe width), ``dcgmi diag``, STREAM triad per GPU, ``ib_write_bw``
per port, nccl-tests bus bandwidth for any collective, node count and size, and the sizing
engine's step time for a short run of the first training workload.

Comparisons are one-sided where the question is "does it fall short": a bandwidth passes
at or above ``expected x (1 - tolerance)`` (NVLink SHARP beating the ring model is a pass),
a step time at or below ``expected x (1 + tolerance)``; counts must be equal. Expected
values use the built-in calibration, never a site calibration, so every acceptance run of
a cluster is measured against the same yardstick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from generator.catalog.load import Catalog
from generator.catalog.models import Gpu, Server
from generator.errors import PodplanError
from generator.sizing.acceptance import nccl
from generator.sizing.acceptance.data import AcceptanceData, acceptance_data
from generator.sizing.model.efficiency import Efficiency, default_efficiency
from generator.sizing.model.hardware import Device, Node, device_from_gpu, node_from_server
from generator.sizing.result import json_number
from generator.spec.models import Spec

PassIf = Literal["at_least", "at_most", "equal"]


@dataclass(frozen=True)
class Expectation:
    """One expected value: ``podplan accept --expected --json`` prints these fields."""

    test: str
    scope: str
    metric: str
    unit: str
    expected: float
    tolerance_pct: float
    source: str
    pass_if: PassIf = "at_least"

    @property
    def limit(self) -> float:
        """The worst value that still passes."""
        if self.pass_if == "at_least":
            return self.expected * (1 - self.tolerance_pct / 100)
        if self.pass_if == "at_most":
            return self.expected * (1 + self.tolerance_pct / 100)
        return self.expected

    def passes(self, measured: float) -> bool:
        slack = 1e-9 * max(1.0, abs(self.expected))
        if self.pass_if == "at_least":
            return measured >= self.limit - slack
        if self.pass_if == "at_most":
            return measured <= self.limit + slack
        return abs(measured - self.expected) <= slack

    def to_json(self) -> dict[str, Any]:
        """The issue's contract for ``accept --expected --json``, these keys and no more.
        The direction is the metric's: times pass at or below ``expected + tolerance``,
        everything else at or above ``expected - tolerance`` (counts with 0 % are exact)."""
        return {"test": self.test, "scope": self.scope, "metric": self.metric,
                "unit": self.unit, "expected": json_number(self.expected),
                "tolerance_pct": self.tolerance_pct, "source": self.source}


def size_text(size: int) -> str:
    """``1 GiB``, ``64 MiB``: nccl-tests sizes are powers of two."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def nodes_text(nodes: int, gpus_per_node: int) -> str:
    return f"{nodes} node{'s' if nodes != 1 else ''} ({nodes * gpus_per_node} GPUs)"


StepFn = Callable[[int], "Expectation | None"]


@dataclass(frozen=True)
class AcceptanceModel:
    """The design as the acceptance ladder sees it, and what each rung should measure."""

    cluster: str
    nodes: int
    server: Server
    gpu: Gpu
    device: Device
    node: Node
    data: AcceptanceData
    eff: Efficiency
    step_fn: StepFn

    def _tol(self, key: str) -> float:
        return self.data.tolerances_pct[key]

    # -- nvidia-smi ---------------------------------------------------------------------
    def gpu_count(self) -> Expectation:
        return Expectation("nvidia-smi", "per node", "GPUs present", "GPUs",
                           float(self.node.gpus), 0.0,
                           f"plan: {self.server.name} with {self.node.gpus} GPUs "
                           f"({self.server.citation('gpu_slots')})", "equal")

    def nvlinks(self) -> Expectation | None:
        links = self.gpu.nvlink_links
        if not links or self.node.nvlink_domain < self.node.gpus:
            return None
        return Expectation("nvidia-smi topo -m", "per GPU pair", "NVLinks between the two GPUs",
                           "links", float(links), 0.0,
                           f"catalog {self.gpu.id} nvlink_links "
                           f"({self.gpu.citation('nvlink_links')})",
                           "equal")

    def rail_affinity(self) -> Expectation:
        return Expectation("nvidia-smi topo -m", "per node",
                           "rail NICs behind a PCIe switch with a GPU (PIX/PXB)", "NICs",
                           float(self.node.nics), 0.0,
                           f"plan: {self.node.nics} east-west NICs per node; GPUDirect RDMA "
                           "needs NIC and GPU on one PCIe switch [A2]", "equal")

    def gpu_checks(self) -> list[Expectation]:
        """Per-GPU settings that make a GPU slow without making it fail."""
        g = self.gpu
        return [
            Expectation("nvidia-smi", "per GPU", "enforced power limit", "W", g.tdp_w,
                        self._tol("power_limit"), f"catalog {g.id} tdp_w ({g.citation('tdp_w')})"),
            Expectation("nvidia-smi", "per GPU", "application SM clock, % of the GPU's max",
                        "%", 100.0, self._tol("clocks"),
                        "design: GPUs run at full clocks (nvidia-smi clocks.applications."
                        "graphics vs clocks.max.sm)"),
            Expectation("nvidia-smi", "per GPU", "max SM clock, % of the cluster median", "%",
                        100.0, self._tol("max_clock_vs_cluster"),
                        "design: one GPU model, one clock; an outlier is a different SKU "
                        "or a capped part"),
            Expectation("nvidia-smi", "per GPU", "ECC enabled", "flag", 1.0, 0.0,
                        "design: HBM ECC on (nvidia-smi ecc.mode.current)", "equal"),
            Expectation("nvidia-smi", "per GPU", "uncorrected ECC errors (volatile)", "errors",
                        0.0, 0.0, "design: none (nvidia-smi ecc.errors.uncorrected.volatile"
                        ".total)", "at_most"),
            Expectation("nvidia-smi", "per GPU", "clock slowdown reasons active", "reasons",
                        0.0, 0.0, "design: no HW, thermal or power-brake slowdown on an idle "
                        "GPU (nvidia-smi clocks_event_reasons.*)", "at_most"),
            Expectation("nvidia-smi", "per GPU", "PCIe link width", "lanes", 16.0, 0.0,
                        f"catalog {g.id}: PCIe Gen{g.pcie_gen} x16 "
                        f"({g.citation('pcie_gbps')})"),
        ]

    # -- DCGM ---------------------------------------------------------------------------
    def dcgm_diag(self) -> Expectation:
        return Expectation("dcgmi diag -r 2", "per node", "tests not passed", "tests", 0.0,
                           0.0, "DCGM level 2: software, PCIe/NVLink, GPU memory [A9]",
                           "at_most")

    def hbm(self) -> Expectation:
        g = self.gpu
        peak = g.memory_bandwidth_tbps * 1000
        return Expectation("dcgmi diag -r memory_bandwidth", "per GPU", "STREAM triad bandwidth",
                           "GB/s", peak * self.data.value("hbm_stream_efficiency"),
                           self._tol("hbm"),
                           f"{peak:g} GB/s HBM ({g.citation('memory_bandwidth_tbps')}) x "
                           f"{self.data.cite('hbm_stream_efficiency')}")

    # -- InfiniBand ---------------------------------------------------------------------
    def ib_write_bw(self) -> Expectation:
        rate = self.node.nic_gbps
        return Expectation("ib_write_bw", "per port (each rail, ring of node pairs)",
                           "BW average", "Gb/s", rate * self.data.value("ib_write_bw_efficiency"),
                           self._tol("ib_write_bw"),
                           f"{rate:g} Gb/s per port ({self.server.id} east_west_nic_gbps: "
                           f"{self.server.citation('east_west_nic_gbps')}) x "
                           f"{self.data.cite('ib_write_bw_efficiency')}")

    # -- nccl-tests ---------------------------------------------------------------------
    def nccl(self, op: str, nodes: int, size: int) -> Expectation:
        busbw = nccl.bus_bandwidth(op, float(size), nodes, self.node, self.device, self.eff)
        return Expectation(f"nccl-tests {op}_perf", nodes_text(nodes, self.node.gpus),
                           f"busbw @ {size_text(size)}", "GB/s", busbw / 1e9,
                           self._tol("nccl"), self._nccl_source(op, nodes))

    def _nccl_source(self, op: str, nodes: int) -> str:
        nvl = self.device.nvlink_bytes_per_s / 1e9
        nvl_text = f"NVLink {nvl:g} GB/s/direction x {self.data.cite('nccl_nvlink_efficiency')}"
        model = "ring/tree and hop latency of the sizing collective model; busbw factors [A1]"
        if nodes == 1 or self.node.nics == 0:
            return f"{nvl_text}; {model}"
        nics = (f"{self.node.nics} x {self.node.nic_gbps:g} Gb/s NICs x "
                f"{self.data.cite('nccl_nic_efficiency')}")
        if op == "alltoall":
            return f"{nvl_text} inside nodes, one NIC per GPU across [A4] ({nics}); {model}"
        return f"min({nvl_text}, {nics}); {model}"

    def nccl_scopes(self, nodes: int | None = None) -> list[int]:
        """Node counts of the nccl-tests rungs: 1, 2, N/2 and N (deduplicated)."""
        n = self.nodes if nodes is None else nodes
        return sorted({k for k in (1, 2, n // 2, n) if 1 <= k <= n})

    # -- training -----------------------------------------------------------------------
    def train_step(self, gpus: int) -> Expectation | None:
        return self.step_fn(gpus)

    def listing(self) -> list[Expectation]:
        """Every expected value, in ladder order (what ``accept --expected`` prints)."""
        rows = [self.gpu_count(), *(e for e in [self.nvlinks()] if e), self.rail_affinity(),
                *self.gpu_checks(), self.dcgm_diag(), self.hbm(), self.ib_write_bw()]
        sizes = [s for s in self.data.listed_sizes_bytes]
        for nodes in self.nccl_scopes():
            rows += [self.nccl(op, nodes, s) for op in nccl.OPS for s in sizes]
        step = self.train_step(self.nodes * self.node.gpus)
        return rows + ([step] if step else [])


def _step_fn(spec: Spec, catalog: Catalog, device: Device, node: Node) -> StepFn:
    """The sizing engine's step time for the spec's first training workload on N GPUs."""
    from generator.sizing.engine import NO_STORAGE
    from generator.sizing.training.estimate import estimate_training
    from generator.sizing.uncertainty import default_table

    def step(gpus: int) -> Expectation | None:
        if not spec.training:
            return None
        w = spec.training[0]
        try:
            est = estimate_training(w, catalog, device, node, default_efficiency(), gpus,
                                    NO_STORAGE, default_table())
        except PodplanError:
            return None
        u = est.uncertainty
        tol = u.high_pct if u else 20.0
        lay = est.parallelism
        layout = (f"TP{lay.tp} PP{lay.pp} DP{lay.dp} CP{lay.cp}, micro-batch "
                  f"{lay.micro_batch_size}, recompute {lay.recompute}")
        band = f"{u.similar_measurements} similar measurements" if u else "no band"
        return Expectation("training step", f"{w.name} on {est.gpus} GPUs ({layout})",
                           "step time", "s", est.step_time_s, round(tol, 1),
                           f"podplan sizing: {w.model}, {w.framework.value}, global batch "
                           f"{w.global_batch_size} x {w.sequence_length} tokens; band +{tol:.0f} "
                           f"% ({band})", "at_most")

    return step


def build_model(spec: Spec, catalog: Catalog, nodes: int) -> AcceptanceModel:
    """The acceptance model of ``spec`` planned on ``nodes`` compute nodes."""
    hw = spec.hardware
    server = catalog.servers[hw.server]
    gpu = catalog.gpus[hw.gpu]
    device = device_from_gpu(gpu)
    node = node_from_server(server, gpu, hw.east_west_nics_per_node)
    data = acceptance_data(catalog)
    eff = nccl.microbenchmark_efficiency(default_efficiency(), data)
    return AcceptanceModel(cluster=spec.name, nodes=max(1, nodes), server=server, gpu=gpu,
                           device=device, node=node, data=data, eff=eff,
                           step_fn=_step_fn(spec, catalog, device, node))

"""The exact text the acceptance ladder's tools print, rendered from given figures.

Used by the lab's stub binaries (this directory is bind-mounted into every lab host as
/usr/local/libexec/podplan-stubs) and by the unit tests' fixtures. Standard library only:
the stubs run under the lab containers' own python3. Each renderer follows the tool's
source, cited per function; the figures are the caller's, never a real measurement.
"""

# The renderers keep the tools' own printf formats (%6.2f, %-7lu, ...) so the text is
# byte-for-byte what the C source prints: percent formatting is the point here.
# ruff: noqa: UP031

from __future__ import annotations

import json

RESULT_LINE = "-" * 87
BUSES = [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB]
"""PCI bus numbers of an HGX H100 board's GPUs (as nvidia-smi and nccl-tests print them)."""
SIZES_TO_8G = [2**k for k in range(3, 34)]
REDOP = {"all_reduce": "sum", "reduce_scatter": "sum", "all_gather": "none", "alltoall": "none"}


def _float(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: %.2f, else %.1f, else %.0f, else exponent, in ``width``."""
    for fmt in (f"%{width}.2f", f"%{width}.1f", f"%{width}.0f"):
        text = fmt % value
        if len(text) <= width:
            return text
    return (f"%{width}.1e" if width >= 7 else f"%{width}.0e") % value


def _factor(op: str, ranks: int) -> float:
    return 2 * (ranks - 1) / ranks if op == "all_reduce" else (ranks - 1) / ranks


def nccl_report(op: str, hosts: list[str], gpus_per_node: int, busbw: dict[int, float],
                wrong: int = 0, pid: int = 41000, gpus_per_rank: int = 1) -> str:
    """nccl-tests 2.17 output (src/util.cu: writeDeviceReport, writeResultHeader,
    writeBenchmarkLine*, writeResultFooter) for ``-b 8 -e 8G -f 2 -g <gpus_per_rank>`` (a
    device line per GPU, its process's pid); ``busbw`` maps sizes to GB/s (sizes not given
    are not printed)."""
    ranks = len(hosts) * gpus_per_node
    out = [
        "# nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707",
        f"# Collective test starting: {op}_perf",
        f"# nThread 1 nGpus {gpus_per_rank} minBytes 8 maxBytes 8589934592 step: 2(factor) "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
        "#",
        "# Using devices",
    ]
    for r in range(ranks):
        host, dev = hosts[r // gpus_per_node], r % gpus_per_node
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                   % (r, 0, pid + r // gpus_per_rank, host, dev, 0, BUSES[dev % 8], 0,
                      "NVIDIA H100 80GB HBM3"))
    blank = ("", "", "", "", "")
    out += [
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
        "          " % blank,
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s"
        % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
           "time", "algbw", "busbw", "#wrong", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
           "(GB/s)", "", ""),
    ]
    total = 0.0
    for size in sorted(busbw):
        bus = busbw[size]
        alg = bus / _factor(op, ranks)
        t_us = size / (alg * 1e9) * 1e6 if alg > 0 else 0.0
        line = "%12d  %12d  %8s  %6s  %6s" % (size, size // 4, "float", REDOP[op], "-1")
        for _ in range(2):
            line += "  %7s  %6s  %6s  %6g" % (_float(t_us, 7), _float(alg, 6),
                                             _float(bus, 6), wrong)
        out.append(line)
        total += bus
    avg = total / len(busbw) if busbw else 0.0
    out += [
        "# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
        "# %-20s : %g %s" % ("Avg bus bandwidth", round(avg, 4), ""),
        "#",
        f"# Collective test concluded: {op}_perf",
        "#",
        "",
    ]
    return "\n".join(out)


HEALTHY_PORT_GBPS = 392.4
SLOW_PORT_GBPS = 196.3


def healthy_busbw(op: str, nodes: int, gpus: int = 8) -> float:
    """Healthy H100 nccl-tests peaks (GB/s) in the range NVIDIA publishes (nccl-tests issues
    290 and 267): NVLink SHARP all_reduce on one node, rings at ~46 GB/s per NDR NIC
    capped by NVLink across nodes, alltoall at one NIC per GPU plus the on-node share."""
    if nodes == 1:
        return {"all_reduce": 468.0, "all_gather": 364.0, "reduce_scatter": 361.0,
                "alltoall": 356.0}[op]
    if op == "alltoall":
        return 48.0 * (nodes * gpus - 1) / (nodes * gpus - gpus)
    return {"all_reduce": 366.0, "all_gather": 362.0, "reduce_scatter": 360.0}[op]


def measured_busbw(op: str, nodes: int, slow_port_in_job: bool) -> dict[int, float]:
    """The curve a stub or fixture reports: healthy, or with one port at half rate in the
    job (every ring is as slow as its slowest channel; alltoall loses a little)."""
    peak = healthy_busbw(op, nodes)
    if slow_port_in_job and nodes > 1:
        peak *= 0.93 if op == "alltoall" else SLOW_PORT_GBPS / HEALTHY_PORT_GBPS
    half = 2 * 2**20 if op == "alltoall" else (8 if nodes == 1 else 16) * 2**20
    return nccl_curve(peak, half)


def nccl_aborted(op: str) -> str:
    """What rank 0 prints before a rank fails to start (a node with fewer GPUs than tasks:
    nccl-tests writes "Invalid number of GPUs" to stderr and MPI aborts the job)."""
    return "\n".join([
        "# nccl-tests version 2.17.6 nccl-headers=22707 nccl-library=22707",
        f"# Collective test starting: {op}_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
        "#",
        "# Using devices",
        "",
    ])


def nccl_curve(peak: float, half_bytes: int, sizes: list[int] | None = None) -> dict[int, float]:
    """A saturating bus-bandwidth curve: ``peak x s / (s + half)`` at each size."""
    return {s: peak * s / (s + half_bytes) for s in (sizes or SIZES_TO_8G)}


def _perftest_head(device: str) -> list[str]:
    """perftest ctx_print_test_info for ib_write_bw (src/perftest_parameters.c)."""
    return [
        RESULT_LINE,
        "                    RDMA_Write BW Test",
        f" Dual-port       : OFF\t\tDevice         : {device}",
        " Number of qps   : 1\t\tTransport type : IB",
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: ON\t\tLock-free      : OFF",
        " ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF",
        " TX depth        : 128",
        " CQ Moderation   : 1",
        " CQE Poll Batch  : Dynamic",
        " Mtu             : 4096[B]",
        " Link type       : IB",
        " Max inline data : 0[B]",
        " rdma_cm QPs\t : OFF",
        " Data ex. method : Ethernet",
        RESULT_LINE,
        " local address: LID 0x0b QPN 0x0066 PSN 0x2f5a3a RKey 0x1fffbd VAddr 0x007f7e4d3ff000",
        " remote address: LID 0x0c QPN 0x0066 PSN 0x3b1b6e RKey 0x1fffbd VAddr 0x007f2b3b0e5000",
        RESULT_LINE,
    ]


def write_bw_client(device: str, gbps: float, size: int = 1048576, iters: int = 5000) -> str:
    """ib_write_bw --report_gbits client: RESULT_FMT_G header and one REPORT_FMT line."""
    rate = gbps * 1e9 / 8 / size / 1e6
    lines = [
        *_perftest_head(device),
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f"
        % (size, iters, gbps * 1.001, gbps, rate),
        RESULT_LINE,
        "",
    ]
    return "\n".join(lines)


def write_bw_server(device: str) -> str:
    """ib_write_bw server side: the test info and the wait for its client."""
    head = _perftest_head(device)
    return "\n".join([
        "", "************************************", "* Waiting for client to connect... *",
        "************************************", *head, "",
    ])


def marker(**fields: str) -> str:
    """The ladder's section marker in ib/<node>.txt (generator/acceptance/parse/perftest)."""
    return "@@ podplan ib_write_bw " + " ".join(f"{k}={v}" for k, v in fields.items()) + " @@"


QUERY = ("index", "name", "serial", "pci.bus_id", "clocks.max.sm",
         "clocks.applications.graphics", "enforced.power.limit", "ecc.mode.current",
         "ecc.errors.uncorrected.volatile.total", "pcie.link.width.current",
         "clocks_event_reasons.hw_slowdown", "clocks_event_reasons.hw_thermal_slowdown",
         "clocks_event_reasons.sw_thermal_slowdown",
         "clocks_event_reasons.hw_power_brake_slowdown")
UNITS = {"clocks.max.sm": "MHz", "clocks.applications.graphics": "MHz",
         "enforced.power.limit": "W"}


def nvsmi_query(gpus: list[dict[str, str]]) -> str:
    """``nvidia-smi --query-gpu=<QUERY> --format=csv,nounits``: header with units, then
    one ", "-separated line per GPU."""
    header = ", ".join(f"{f} [{UNITS[f]}]" if f in UNITS else f for f in QUERY)
    rows = [", ".join(g[f] for f in QUERY) for g in gpus]
    return "\n".join([header, *rows, ""])


def h100_gpu(index: int, node_seed: int, app_clock: int = 1980, power: float = 700.0,
             slowdown: str = "Not Active") -> dict[str, str]:
    """One healthy H100 SXM row (the caller changes what it wants broken)."""
    return {
        "index": str(index), "name": "NVIDIA H100 80GB HBM3",
        "serial": f"16523{node_seed:03d}{index:05d}",
        "pci.bus_id": "00000000:%02X:00.0" % BUSES[index],
        "clocks.max.sm": "1980", "clocks.applications.graphics": str(app_clock),
        "enforced.power.limit": f"{power:.2f}", "ecc.mode.current": "Enabled",
        "ecc.errors.uncorrected.volatile.total": "0", "pcie.link.width.current": "16",
        "clocks_event_reasons.hw_slowdown": slowdown,
        "clocks_event_reasons.hw_thermal_slowdown": "Not Active",
        "clocks_event_reasons.sw_thermal_slowdown": "Not Active",
        "clocks_event_reasons.hw_power_brake_slowdown": "Not Active",
    }


def nvsmi_topo(gpus: int, nics: list[str], nvlinks: int = 18) -> str:
    """``nvidia-smi topo -m`` of an HGX H100 board: NV<n> between GPUs, each NIC on its
    GPU's PCIe switch (PIX), NICs of the other socket SYS, legend at the end."""
    cols = [f"GPU{i}" for i in range(gpus)] + [f"NIC{i}" for i in range(len(nics))]
    lines = ["\t" + "\t".join(cols) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]

    def link(a: int, b: int, a_gpu: bool, b_gpu: bool) -> str:
        if a_gpu == b_gpu and a == b:
            return " X "
        if a_gpu and b_gpu:
            return f"NV{nvlinks}"
        if a == b or (not a_gpu and not b_gpu and a // 4 == b // 4):
            return "PIX" if a == b else "NODE"
        return "NODE" if a // 4 == b // 4 else "SYS"

    for i in range(gpus):
        cells = [link(i, j, True, True) for j in range(gpus)]
        cells += [link(i, j, True, False) for j in range(len(nics))]
        cpus = "0-47,96-143" if i < 4 else "48-95,144-191"
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{cpus}\t{0 if i < 4 else 1}\t\tN/A")
    for i in range(len(nics)):
        cells = [link(i, j, False, True) for j in range(gpus)]
        cells += [link(i, j, False, False) for j in range(len(nics))]
        lines.append(f"NIC{i}\t" + "\t".join(cells))
    lines += ["", "Legend:", "", "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between "
              "NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe "
              "Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically "
              "the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the "
              "PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks", "",
              "NIC Legend:", ""]
    lines += [f"  NIC{i}: {d}" for i, d in enumerate(nics)]
    return "\n".join([*lines, "", ""])


def dcgm_json(tests: list[tuple[str, str, dict[int, str], dict[int, str]]],
              gpus: int) -> str:
    """``dcgmi diag -j`` as DCGM 4 writes it (dcgmi/Diag.cpp HelperJsonBuildOutput):
    ``tests`` are (category, name, {gpu: status}, {gpu: warning})."""
    cats: dict[str, list[dict[str, object]]] = {}
    for category, name, statuses, warnings in tests:
        results = []
        for gpu, status in sorted(statuses.items()):
            entry: dict[str, object] = {"entity_group": "GPU", "entity_group_id": 1,
                                        "entity_id": gpu, "status": status}
            if gpu in warnings:
                entry["warnings"] = [{"warning": warnings[gpu], "error_id": 62,
                                      "error_category": 3, "error_severity": 2}]
            results.append(entry)
        worst = "Fail" if any(s == "Fail" for s in statuses.values()) else "Pass"
        cats.setdefault(category, []).append({"name": name, "results": results,
                                              "test_summary": {"status": worst}})
    doc = {
        "DCGM Diagnostic": {"test_categories": [{"category": c, "tests": t}
                                                for c, t in cats.items()]},
        "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1,
                           "entities": [{"entity_id": g, "device_id": "2330"}
                                        for g in range(gpus)]}],
        "metadata": {"version": "4.2.3", "Driver Version Detected": "570.133.20"},
    }
    return json.dumps(doc, indent=3) + "\n"


def level2_tests(gpus: int, fail: dict[int, str] | None = None
                 ) -> list[tuple[str, str, dict[int, str], dict[int, str]]]:
    """``dcgmi diag -r 2``: software (Deployment), pcie (Integration), memory (Hardware)."""
    fail = fail or {}
    ok = {g: "Pass" for g in range(gpus)}
    memory = {g: ("Fail" if g in fail else "Pass") for g in range(gpus)}
    return [("Deployment", "software", ok, {}), ("Integration", "pcie", ok, {}),
            ("Hardware", "memory", memory, fail)]


def megatron_log(steps_ms: list[float], total: int | None = None) -> str:
    """Megatron-LM ``training_log`` lines (megatron/training/training.py)."""
    n = total or len(steps_ms)
    return "".join(
        f" [2026-01-01 00:00:{i:02d}] iteration {i + 1:8d}/{n:8d} | consumed samples: "
        f"{(i + 1) * 64:12d} | elapsed time per iteration (ms): {ms:.1f} | learning rate: "
        f"1.000000E-04 | global batch size:    64 | lm loss: 2.312345E+00 |\n"
        for i, ms in enumerate(steps_ms))

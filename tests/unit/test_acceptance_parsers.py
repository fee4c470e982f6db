"""Each tool's exact output, current and older releases, healthy and broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.acceptance.parse.dcgm import parse_dcgm
from generator.acceptance.parse.nccl import parse_nccl
from generator.acceptance.parse.nvsmi import parse_query, parse_topo
from generator.acceptance.parse.perftest import parse_write_bw, sections, to_gbps
from generator.acceptance.parse.train import parse_steps

FIX = Path("tests/fixtures/acceptance")

# nccl-tests 2.13-era output (no version line, no Group field, no root column): the layout
# of the A100 alltoall report in NVIDIA/nccl-tests issue 100.
NCCL_OLD = (FIX / "samples/nccl-2.13-alltoall.txt").read_text()

NCCL_PER_ITER = (FIX / "samples/nccl-per-iteration.txt").read_text()


def test_nccl_current_format_from_the_fixture() -> None:
    rep = parse_nccl((FIX / "run-healthy/nccl/all_reduce.2n.txt").read_text(), "f")
    assert rep.op == "all_reduce" and rep.hosts == ["gpu001", "gpu002"]
    assert len(rep.ranks) == 16 and rep.ranks[9].device == 1
    assert rep.rows[-1].size == 8 * 2**30 and rep.rows[-1].wrong == 0
    assert 360 < rep.rows[-1].busbw < 367 and rep.out_of_bounds == 0 and not rep.issues


def test_nccl_older_release_without_group_root_or_wrong_counts() -> None:
    rep = parse_nccl(NCCL_OLD, "old.txt")
    assert rep.op is None and rep.hosts == ["node2"] and rep.ranks[1].bus_id == "0x13"
    assert [(r.size, r.busbw, r.busbw_in_place, r.wrong) for r in rep.rows] == [
        (134217728, 110.81, 110.76, None), (1073741824, 195.10, 195.56, None)]


def test_nccl_per_iteration_columns_do_not_shift_busbw() -> None:
    rep = parse_nccl(NCCL_PER_ITER, "i.txt")
    assert (rep.rows[0].busbw, rep.rows[0].busbw_in_place, rep.rows[0].wrong_in_place) == \
        (357.83, 357.90, 3)


def test_nccl_that_did_not_finish_is_an_issue_not_a_crash() -> None:
    text = "# nThread 1 nGpus 1\n#\n# Using devices\ngpu004: Test CUDA failure common.cu:892 " \
           "'invalid device ordinal'\n"
    rep = parse_nccl(text, "nccl/x.txt")
    assert rep.rows == []
    assert [i.line for i in rep.issues] == [4, None]
    assert "invalid device ordinal" in rep.issues[0].message


WRITE_BW_MIB = (FIX / "samples/ib_write_bw-mib.txt").read_text()


def test_write_bw_gbits_from_the_fixture() -> None:
    text = (FIX / "run-faults/ib/gpu002.txt").read_text()
    client = [s for s in sections(text) if s.fields["role"] == "client"]
    assert len(client) == 8 and client[3].fields == {
        "role": "client", "device": "mlx5_3", "server": "gpu001", "client": "gpu002"}
    res = parse_write_bw(client[3].text, "ib/gpu002.txt", client[3].line)
    assert (res.device, res.link_type, res.gbps, res.bytes) == ("mlx5_3", "IB", 196.3, 1048576)


def test_write_bw_mib_per_second_and_the_largest_size() -> None:
    res = parse_write_bw(WRITE_BW_MIB, "x")
    assert res.bytes == 1048576 and res.gbps == pytest.approx(23391.77 * 2**20 * 8 / 1e9)
    assert to_gbps(1.0, "MB/sec") == to_gbps(1.0, "MiB/sec")


def test_write_bw_without_a_result_names_the_error_line() -> None:
    res = parse_write_bw(" Couldn't connect to gpu009:18515\nUnable to init the socket "
                         "connection\n", "ib/gpu001.txt", 40)
    assert res.gbps is None
    assert [(i.line, i.message[:20]) for i in res.issues][:1] == [(40, "Couldn't connect to ")]


# DCGM 3.x: "DCGM GPU Diagnostic", gpu_id strings, a string info (dcgmi/Diag.cpp at 3.3.9).
DCGM3 = {"DCGM GPU Diagnostic": {"test_categories": [
    {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"status": "Pass"}]}]},
    {"category": "Stress", "tests": [{"name": "Memory Bandwidth", "results": [
        {"gpu_id": "0", "status": "Pass", "info": "GPU 0 passed"},
        {"gpu_id": "3", "status": "Fail", "warnings": [
            {"warning": "GPU 3 only achieved a memory bandwidth of 1710.25 GB/s, failing to "
                        "meet 2285.37 GB/s for test 6", "error_id": 62}]}]}]}]}}


def test_dcgm4_from_the_fixture() -> None:
    rep = parse_dcgm((FIX / "run-healthy/dcgm/gpu001.diag.json").read_text(), "d")
    assert {r.test for r in rep.results} == {"software", "pcie", "memory"}
    assert len(rep.results) == 24 and not rep.not_passed and rep.version == "4.2.3"


def test_dcgm3_and_the_bandwidth_in_a_failure_message() -> None:
    rep = parse_dcgm(json.dumps(DCGM3), "d")
    assert [(r.gpu, r.status) for r in rep.results] == [(None, "Pass"), (0, "Pass"), (3, "Fail")]
    bad = rep.not_passed[0]
    assert bad.bandwidth_gbps() == pytest.approx(1710.25)
    assert rep.results[1].bandwidth_gbps() is None


@pytest.mark.parametrize(("text", "why"), [
    ("Error: unable to establish a connection to the specified host: localhost", "not dcgmi"),
    ('{"DCGM Diagnostic": {"runtime_error": "No GPUs on this host"}}', "did not run"),
    ('{"something": 1}', "no test_categories"),
])
def test_dcgm_that_did_not_run(text: str, why: str) -> None:
    rep = parse_dcgm(text, "dcgm/gpu001.diag.json")
    assert rep.issues and why in rep.issues[0].message


def test_nvidia_smi_query_by_field_name_with_units_and_na() -> None:
    text = ("index, clocks.max.sm [MHz], enforced.power.limit [W], ecc.mode.current\n"
            "0, 1980, 700.00, Enabled\n1, [N/A], [Not Supported], [N/A]\n")
    q = parse_query(text, "q")
    assert [g.num("clocks.max.sm") for g in q.gpus] == [1980.0, None]
    assert q.gpus[1].num("enforced.power.limit") is None and q.gpus[0].text("ecc.mode.current") \
        == "Enabled"


def test_nvidia_smi_query_broken_lines() -> None:
    q = parse_query("index, name\n0, a\n1\n", "gpu/x.query.csv")
    assert len(q.gpus) == 1 and q.issues[0].line == 3
    assert parse_query("No devices were found\n", "f").issues[0].line == 1


def test_topology_from_the_fixture_and_with_spaces() -> None:
    text = (FIX / "run-faults/gpu/gpu004.topo.txt").read_text()
    for t in (parse_topo(text, "t"), parse_topo(text.replace("\t", "    "), "t")):
        assert len(t.gpus) == 7 and t.nics[0] == "mlx5_0" and t.nvlinks("GPU0", "GPU6") == 18
        assert t.links[("GPU3", "mlx5_3")] == "PIX" and t.links[("GPU0", "mlx5_7")] == "SYS"


def test_topology_of_an_older_driver_names_nics_directly() -> None:
    text = ("\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\n"
            "GPU0\t X \tNV12\tPXB\t0-31\nGPU1\tNV12\t X \tSYS\t0-31\nmlx5_0\tPXB\tSYS\t X \n")
    t = parse_topo(text, "t")
    assert t.nics == ["mlx5_0"] and t.nvlinks("GPU1", "GPU0") == 12
    assert t.links[("GPU0", "mlx5_0")] == "PXB"


def test_step_times_megatron_and_nemo() -> None:
    mega = (" iteration        1/      20 | elapsed time per iteration (ms): 9000.0 |\n"
            + "".join(f" iteration {i:8d}/      20 | elapsed time per iteration (ms): "
                      f"{1000 + i}.0/1000.0 |\n" for i in range(2, 9)))
    log = parse_steps(mega, "m")
    assert len(log.steps_s) == 8 and log.step_s == pytest.approx(1.006)
    nemo = "".join(f"Training epoch 0, iteration {i}/9 | global_step: {i} | "
                   f"train_step_timing in s: {2.0 if i else 7.1} |\n" for i in range(6))
    assert parse_steps(nemo, "n").step_s == pytest.approx(2.0)
    assert parse_steps("... train_step_timing in s=3.130]\n", "n").step_s == 3.13
    assert parse_steps("no steps here\n", "x").issues

"""Every input from issue 12's list gets an answer or the exact error it now prints.

Each of these once ended in a traceback, a hang, a silent guess or a leak of pydantic's
internals. They run through the real entry point (``generator.cli.main``) in-process.
"""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest

from tests.cli.runner import GOOD, podplan, write

WORK_INF = GOOD.replace("steps: 10", "tokens: .inf")
CHAT = """\
name: chat
workloads:
  - {name: chat, kind: inference, model: llama3.1-8b, input_tokens: 10, output_tokens: 10,
     requests_per_minute: RPM}
"""


def _error(spec: Path, line: int, text: str, summary: str = "spec is not valid (1 problem)") -> str:
    return f"error: {spec}: {summary}\n  {spec}:{line}: {text}\n"


def test_a_workload_that_is_a_word_not_a_mapping(tmp_path: Path) -> None:
    spec = write(tmp_path, "name: x\nworkloads: [pretrain]\n")
    r = podplan("validate", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 2, "workloads[0]: must be a workload mapping, not 'pretrain'\n"
                           "      allowed: a mapping with name, kind, model and the work to do")


@pytest.mark.parametrize("command", [("size",), ("size", "--json"), ("validate",)])
def test_l40s_has_no_nvlink_and_still_sizes(tmp_path: Path, command: tuple[str, ...]) -> None:
    spec = write(tmp_path, CHAT.replace("RPM", "60") + GOOD.split("workloads:\n")[1]
                 + "hardware: {server: r760xa, gpu: l40s-48gb, east_west_nics_per_node: 4, "
                   "gpus: 8}\n")
    r = podplan(*command, str(spec))
    assert r.code == 0, r.err
    assert r.err == ""


@pytest.mark.parametrize("command", ["validate", "size", "plan"])
def test_an_ipv6_cidr_is_refused_by_every_command(tmp_path: Path, command: str) -> None:
    spec = write(tmp_path, GOOD + "network: {fabric_cidr: 'fd00:200::/56'}\n")
    r = podplan(command, str(spec), *(["--out", str(tmp_path / "o")] if command == "plan" else []))
    assert r.code == 2
    assert r.err == _error(spec, 7, "network.fabric_cidr: fd00:200::/56 is an IPv6 network; "
                                    "podplan plans IPv4 networks only")
    assert not (tmp_path / "o").exists()


def test_infinite_tokens(tmp_path: Path) -> None:
    spec = write(tmp_path, WORK_INF)
    r = podplan("size", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 6, "workloads[0].tokens: must be a number from 1 to 1e15, "
                                    "not .inf")


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_infinite_or_nan_requests(tmp_path: Path, value: str) -> None:
    spec = write(tmp_path, CHAT.replace("RPM", value))
    r = podplan("size", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 4, "workloads[0].requests_per_minute: must be a number from "
                                    f"0.001 to 1e8, not {value}")


@pytest.mark.parametrize("flow", [True, False])
def test_deep_nesting_is_refused_quickly(tmp_path: Path, flow: bool) -> None:
    depth = 5000 if flow else 2000
    body = ("[" * depth + "]" * depth + "\n") if flow else "\n" + "".join(
        "  " * i + "- a:\n" for i in range(1, 40))
    spec = write(tmp_path, "name: deep\nworkloads: " + body)
    start = time.perf_counter()
    r = podplan("validate", str(spec))
    assert time.perf_counter() - start < 1.0
    assert r.code == 2
    path = "workloads" + "[0]" * 11 if flow else "workloads[0].a[0].a[0].a[0].a[0].a[0]"
    assert r.err == _error(spec, 2 if flow else 18, f"{path}: nested deeper than 32 levels",
                           "is not valid YAML")


def test_a_billion_gpus_is_refused_at_once(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "hardware: {gpus: 1e9}\n")
    start = time.perf_counter()
    r = podplan("size", str(spec))
    assert time.perf_counter() - start < 1.0
    assert r.code == 2
    assert r.err == _error(spec, 7, "hardware.gpus: 1,000,000,000 is more than 32,768\n"
                                    "      allowed: 1 to 32,768 (the largest cluster podplan "
                                    "sizes)")


@pytest.mark.parametrize("gpus", [524_288, 32_776])
@pytest.mark.parametrize("command", ["validate", "size", "plan", "bom"])
def test_validate_size_plan_and_bom_refuse_the_same_gpu_counts(
    tmp_path: Path, gpus: int, command: str
) -> None:
    spec = write(tmp_path, GOOD + f"hardware: {{gpus: {gpus}}}\n")
    r = podplan(command, str(spec), *(["--dry-run"] if command == "plan" else []))
    assert r.code == 2
    assert r.err == _error(spec, 7, f"hardware.gpus: {gpus:,} is more than 32,768\n"
                                    "      allowed: 1 to 32,768 (the largest cluster podplan "
                                    "sizes)")


def test_an_alias_bomb_is_refused_in_well_under_a_second(tmp_path: Path) -> None:
    lines = ["name: bomb", "a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "\n".join(lines) + "\n"
    assert len(text) < 420  # the 418-byte bomb: 54 s and 4.4 GB before
    spec = write(tmp_path, text)
    start = time.perf_counter()
    r = podplan("validate", str(spec))
    assert time.perf_counter() - start < 0.5
    assert r.code == 2
    assert r.err == _error(spec, 6, "e[1]: has more than 20,000 values, counting what aliases "
                                    "repeat", "is not valid YAML")


def test_a_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "    steps: 20\n")
    r = podplan("validate", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 7, "workloads[0].steps: duplicate key 'steps' (first on line "
                                    "6)", "is not valid YAML")


@pytest.mark.parametrize(("value", "shown"), [("true", "true"), ("false", "false")])
def test_a_boolean_is_not_a_gpu_count(tmp_path: Path, value: str, shown: str) -> None:
    spec = write(tmp_path, GOOD + f"hardware: {{gpus: {value}}}\n")
    r = podplan("validate", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 7, "hardware.gpus: must be a whole number from 1 to 32,768, "
                                    f"not {shown}")


@pytest.mark.parametrize(
    ("value", "tail"),
    [("several", ""), ("atuo", "\n      hint: did you mean 'auto'?")],
)
def test_union_errors_read_as_one_human_message(tmp_path: Path, value: str, tail: str) -> None:
    spec = write(tmp_path, GOOD + f"hardware: {{hot_spares: {value}}}\n")
    r = podplan("validate", str(spec))
    assert r.code == 2
    assert r.err == _error(spec, 7, "hardware.hot_spares: must be a whole number from 0 to 512 "
                                    f"or 'auto', not '{value}'{tail}")
    for leak in ("hot_spares.int", "literal[", "int_parsing", "Input should"):
        assert leak not in r.err


def test_planner_errors_keep_file_and_line(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "facility: {rack_power_kw: 5}\n")
    r = podplan("plan", str(spec), "--dry-run")
    assert r.code == 2
    assert r.err == _error(
        spec, 7, "facility.rack_power_kw: a 5 kW rack cannot take one Dell PowerEdge XE9680 "
        "(12.5 kW) plus its out-of-band switch (0.55 kW)\n"
        "      hint: set facility.rack_power_kw to at least 13.05",
        "the racks cannot hold the plan")


def test_network_errors_keep_file_and_line(tmp_path: Path) -> None:
    spec = write(tmp_path, GOOD + "network: {mgmt_cidr: 10.129.0.0/30}\n")
    r = podplan("plan", str(spec), "--dry-run")
    assert r.code == 2
    assert r.err == _error(
        spec, 7, "network.mgmt_cidr: 10.129.0.0/30 has room for 0 addresses after the 9 "
        "reserved at its start; the plan needs 4\n      allowed: a /28 or larger\n"
        "      hint: or leave network.mgmt_cidr unset: podplan then sizes it from the plan",
        "network.mgmt_cidr is too small for this cluster")


def test_out_is_a_file(tmp_path: Path) -> None:
    spec, out = write(tmp_path, GOOD), write(tmp_path, "not a directory", "out")
    r = podplan("plan", str(spec), "--out", str(out))
    assert (r.code, r.out) == (2, "")
    assert r.err == f"error: cannot write {out}: it is a file, not a directory\n"


def test_out_inside_a_file(tmp_path: Path) -> None:
    spec, file = write(tmp_path, GOOD), write(tmp_path, "x", "file")
    r = podplan("plan", str(spec), "--out", str(file / "sub"))
    assert (r.code, r.out) == (2, "")
    assert r.err == f"error: cannot write {file / 'sub'}: {file} is a file, not a directory\n"


def test_a_file_where_a_directory_must_go(tmp_path: Path) -> None:
    spec, out = write(tmp_path, GOOD), tmp_path / "out"
    out.mkdir()
    write(out, "a file named like a directory podplan writes", "stacks")
    r = podplan("plan", str(spec), "--out", str(out))
    assert r.code == 2 and r.out == ""
    assert r.err.startswith(f"error: cannot write {out / 'stacks'}")
    assert r.err.count("\n") == 1 and "Traceback" not in r.err


def test_out_in_an_unwritable_place(tmp_path: Path) -> None:
    import os

    spec = write(tmp_path, GOOD)
    if os.geteuid() == 0:
        out = Path("/sys/podplan-out")  # sysfs refuses new directories, even to root
        if not Path("/sys/kernel").is_dir():
            pytest.skip("no sysfs to be refused by")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        out = locked / "out"
    r = podplan("plan", str(spec), "--out", str(out))
    assert (r.code, r.out) == (2, "")
    why = ("permission denied", "operation not permitted", "No such file or directory")
    assert r.err in [f"error: cannot write {out}: {w}; nothing was changed\n" for w in why]


def test_bom_csv_is_plain_csv(tmp_path: Path) -> None:
    r = podplan("bom", "--format", "csv", "examples/slurm-lab.yaml")
    assert r.code == 0
    assert not r.out.startswith("#")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert rows[0]["category"] == "compute" and rows[0]["catalog_id"] == "xe9680-h100-sxm"
    assert rows[-1]["category"] == "total"
    assert rows[0]["generated_by"] == "podplan from examples/slurm-lab.yaml"


def test_size_json_says_what_the_table_says() -> None:
    r = podplan("size", "--json", "examples/llama2-70b-lora.yaml")
    table = podplan("size", "examples/llama2-70b-lora.yaml").out
    doc = json.loads(r.out)
    train, chat = doc["workloads"]
    assert set(train["memory"]) == {"weights_gib", "gradients_gib", "optimizer_gib",
                                    "activations_gib", "kv_cache_gib", "overhead_gib",
                                    "total_gib"}
    assert chat["meets_slo"] is True and "ttft_ms" in chat
    for note in [*doc["notes"], *train["notes"], *chat["notes"]]:
        assert note in table
    assert train["runners_up"] and train["seed"]["formula"]
    assert {"model", "params_b", "steps", "processed_tokens", "checkpoint_gb"} <= set(train)


def test_size_json_explains_a_misfit_and_keeps_small_numbers(tmp_path: Path) -> None:
    spec = write(tmp_path, "name: misfit\nworkloads:\n  - {name: sft, kind: sft, model: "
                           "llama2-70b, steps: 1}\nhardware: {gpus: 8}\n")
    doc = json.loads(podplan("size", "--json", str(spec)).out)
    (w,) = doc["workloads"]
    assert w["fits"] is False and doc["fits"] is False
    assert any("fit" in n for n in w["notes"]), w["notes"]
    assert 0 < w["time_hours"] < 0.1  # one step of seconds: not rounded to 0.0
    assert len(f"{w['time_hours']:.10g}".strip("0.").replace(".", "")) >= 3


def test_a_price_book_error_is_located_and_human(tmp_path: Path) -> None:
    book = write(tmp_path, "items:\n  xe9680-h100-sxm: {usd: lots}\n", "prices.yaml")
    spec = write(tmp_path, GOOD + "prices: prices.yaml\n")
    r = podplan("bom", str(spec))
    assert r.code == 2
    assert r.err == _error(book.resolve(), 2,
                           "items.xe9680-h100-sxm.usd: must be a number, not 'lots'",
                           "price book does not validate")

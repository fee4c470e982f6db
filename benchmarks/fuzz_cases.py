"""Hypothesis strategies for specs a user might write, and a few no one should.

Shared by the fuzz test (``tests/fuzz``) and the long campaign (``python -m benchmarks.fuzz``):

* ``generated``: specs built field by field from catalog ids and boundary values, with any
  field sometimes replaced by junk of the wrong type, sign or size;
* ``field_mutations``: an example spec with one value replaced, one key dropped or one
  unknown key added;
* ``byte_mutations``: an example spec's bytes flipped, cut, repeated or spliced with YAML
  syntax (anchors, aliases, tags, brackets, tabs, NUL, invalid UTF-8);
* ``attacks``: alias bombs, deep nesting, duplicate keys and oversize files.

A case is the spec text plus the command line to run on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from generator.catalog.load import default_catalog

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = {p.name: p.read_bytes() for p in sorted((REPO / "examples").glob("*.yaml"))}
_CAT = default_catalog()
MODELS = sorted(_CAT.models)
GPUS = sorted(_CAT.gpus)
SERVERS = sorted(_CAT.servers)

SPEC_PATH = "{spec}"
"""Placeholder in a command line for the spec file the runner writes."""
COMMANDS: list[tuple[str, ...]] = [
    ("validate", SPEC_PATH),
    ("size", SPEC_PATH),
    ("size", "--json", SPEC_PATH),
    ("bom", "--format", "table", SPEC_PATH),
    ("bom", "--format", "csv", SPEC_PATH),
    ("plan", SPEC_PATH, "--dry-run"),
    ("plan", SPEC_PATH, "--out", "{out}"),
    ("accept", SPEC_PATH, "--expected", "--json"),
]


@dataclass(frozen=True)
class Case:
    """One fuzz input: where it came from, the spec bytes and the command to run."""

    origin: str
    text: bytes
    argv: tuple[str, ...]


# --- values ----------------------------------------------------------------------------------

BIG = [2**31, 2**63, 10**20, 10**400]
junk = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(BIG),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -0.0, 1e-308, 0.5]),
    st.text(max_size=12), st.sampled_from(["", "auto", "1e9", ".inf", "::/0", "fd00::/8",
                                           "10.0.0.0/8", "0.0.0.0/0", "none", "yes"]),
    st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.sampled_from(["a", "tp", "name", "kind"]), st.integers(0, 9), max_size=2),
)


Maybe = Callable[[st.SearchStrategy[Any]], st.SearchStrategy[Any]]


def with_junk(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A valid value or, about one time in three, junk."""
    return st.one_of(valid, valid, junk)


def clean(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return valid


def ints(*values: int) -> st.SearchStrategy[int]:
    return st.sampled_from(values)


def floats(*values: float) -> st.SearchStrategy[float]:
    return st.sampled_from(values)


def optional(maybe: Maybe, fields: dict[str, st.SearchStrategy[Any]]) -> (
    st.SearchStrategy[dict[str, Any]]
):
    """A mapping with any subset of ``fields``."""
    return st.fixed_dictionaries({}, optional={k: maybe(v) for k, v in fields.items()})


def inline_model(maybe: Maybe) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": st.just("inline-m"), "layers": maybe(ints(1, 2, 24, 80, 126, 1024, 1025)),
         "hidden_size": maybe(ints(64, 4096, 8192, 16384, 262144)),
         "attention_heads": maybe(ints(1, 8, 32, 64)),
         "vocab_size": maybe(ints(1, 32000, 128256, 4194304))},
        optional={"kv_heads": maybe(ints(1, 8, 64)),
                  "ffn_hidden_size": maybe(ints(1, 14336, 28672)),
                  "mlp": st.sampled_from(["gelu", "swiglu"]), "tied_embeddings": st.booleans(),
                  "experts": maybe(ints(1, 8, 64, 4096)), "top_k": maybe(ints(1, 2, 8))},
    )


def model(maybe: Maybe) -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(MODELS), st.sampled_from(MODELS), inline_model(maybe),
                     maybe(st.sampled_from(MODELS)))


def pins(maybe: Maybe) -> st.SearchStrategy[dict[str, Any]]:
    return optional(maybe, {"tp": ints(1, 2, 3, 4, 8, 16), "pp": ints(1, 2, 4, 16, 126),
                            "dp": ints(1, 2, 8, 64), "cp": ints(1, 2, 4), "vp": ints(1, 2, 8),
                            "recompute": st.sampled_from(["none", "selective", "full"]),
                            "ep": ints(1, 2, 6, 8, 16, 64), "etp": ints(1, 2, 3)})


@st.composite
def training(draw: st.DrawFn, name: str, maybe: Maybe) -> dict[str, Any]:
    w: dict[str, Any] = {"name": name,
                         "kind": draw(st.sampled_from(["pretrain", "sft", "lora", "ptuning"])),
                         "model": draw(model(maybe))}
    w.update(draw(optional(maybe, {
        "precision": st.sampled_from(["bf16", "fp8"]),
        "framework": st.sampled_from(["nemo", "megatron", "fsdp", "deepspeed"]),
        "sequence_length": ints(1, 128, 2048, 4096, 8192, 131072, 1048576),
        "global_batch_size": ints(1, 3, 64, 128, 2048, 1048576),
        "micro_batch_size": ints(1, 2, 4, 16),
        "deadline_hours": floats(0.01, 1, 24, 720, 87600),
        "parallelism": pins(maybe),
    })))
    work = draw(st.sampled_from(["steps", "tokens", "dataset", "steps", "tokens", "two"]))
    if work in ("steps", "two"):
        w["steps"] = draw(maybe(ints(1, 10, 1000, 10**6, 10**9)))
    if work in ("tokens", "two"):
        w["tokens"] = draw(maybe(floats(1, 1e9, 1.56e13, 1e15)))
    if work == "dataset":
        w["dataset"] = draw(optional(maybe, {
            "samples": ints(1, 1000, 10**6, 10**13), "avg_tokens_per_sample":
            floats(0.5, 512, 4096, 1e6), "epochs": floats(0.01, 1, 3, 10000),
            "packed": st.booleans()}))
    return w


@st.composite
def inference(draw: st.DrawFn, name: str, maybe: Maybe) -> dict[str, Any]:
    w: dict[str, Any] = {"name": name, "kind": "inference", "model": draw(model(maybe)),
                         "input_tokens": draw(maybe(ints(1, 128, 1000, 32768, 1048576))),
                         "output_tokens": draw(maybe(ints(1, 128, 1000, 1048576)))}
    w.update(draw(optional(maybe, {
        "precision": st.sampled_from(["bf16", "fp8"]),
        "requests_per_minute": floats(0.001, 1, 600, 1e5, 1e8),
        "ttft_ms": floats(0.001, 50, 2000, 86_400_000), "tpot_ms": floats(0.001, 5, 50, 1000),
        "parallelism": optional(maybe, {"tp": ints(1, 2, 3, 4, 8, 12, 16), "pp": ints(1, 2, 4, 200),
                                        "ep": ints(1, 2, 6, 8, 16, 512)}),
    })))
    return w


def hardware(maybe: Maybe) -> st.SearchStrategy[dict[str, Any]]:
    return optional(maybe, {
        "server": st.sampled_from(SERVERS), "gpu": st.sampled_from(GPUS),
        "east_west_nics_per_node": ints(8, 4, 2), "login_nodes": ints(0, 1, 8),
        "gpus": ints(1, 4, 8, 12, 16, 64, 1024, 16384, 65536),
        "hot_spares": st.sampled_from([0, 1, 16, 1024, "auto"]),
    })


def site(maybe: Maybe) -> st.SearchStrategy[dict[str, Any]]:
    cidrs = st.sampled_from(["10.128.0.0/20", "10.129.0.0/16", "10.0.0.0/30", "192.168.0.0/24",
                             "10.192.0.0/12", "fd00::/64"])
    return optional(maybe, {
        "storage": optional(maybe, {"dataset_tb": floats(0, 1, 400, 1e6),
                                    "checkpoint_keep": ints(1, 3, 1000),
                                    "checkpoint_write_seconds": floats(1, 60, 120, 86400)}),
        "facility": optional(maybe, {"rack_power_kw": floats(1, 5, 17, 40, 130, 1000),
                                     "rack_units": ints(10, 42, 48, 58),
                                     "pue": floats(1.0, 1.3, 3.0),
                                     "power_usd_per_kwh": floats(0, 0.12, 100)}),
        "fabric": optional(maybe, {"growth_nodes": ints(0, 1, 64, 8192),
                                   "subnet_manager": st.sampled_from(["ufm", "opensm"])}),
        "network": optional(maybe, {k: cidrs for k in ("oob_cidr", "mgmt_cidr",
                                                       "frontend_cidr", "fabric_cidr")}),
        "provisioning": optional(maybe, {
            "scheduler": st.sampled_from(["slurm", "bcm"]),
            "clouds": st.lists(st.sampled_from(["aws", "gcp", "azure"]), max_size=3, unique=True),
            "admin_cidr": st.sampled_from(["203.0.113.0/24", "0.0.0.0/0", "2001:db8::/32"])}),
    })


@st.composite
def generated(draw: st.DrawFn) -> bytes:
    """A spec built field by field: half of them clean, half with junk in some fields."""
    maybe: Maybe = with_junk if draw(st.booleans()) else clean
    n = draw(st.integers(1, 3))
    workloads = [draw(st.one_of(training(f"w{i}", maybe), inference(f"w{i}", maybe)))
                 for i in range(n)]
    doc: dict[str, Any] = {"name": draw(maybe(st.sampled_from(["fz", "fuzz-1"]))),
                           "workloads": workloads}
    hw = draw(hardware(maybe))
    if hw:
        doc["hardware"] = hw
    doc.update(draw(site(maybe)))
    return yaml.safe_dump(doc, sort_keys=False).encode()


# --- mutations of the examples ---------------------------------------------------------------

def _leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(data, dict):
        for k, v in data.items():
            out += _leaves(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _leaves(v, (*path, i))
    return out


@st.composite
def field_mutations(draw: st.DrawFn) -> bytes:
    """An example with one value replaced, one key dropped, or an unknown key added."""
    data = yaml.safe_load(EXAMPLES[draw(st.sampled_from(sorted(EXAMPLES)))])
    path = draw(st.sampled_from(_leaves(data)))
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    action = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
    if action == "replace":
        parent[path[-1]] = draw(junk)
    elif action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[draw(st.sampled_from(["gpu", "stepz", "kinds", "tp", "x"]))] = draw(junk)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()


TOKENS = [b"&a ", b"*a", b"<<: *a", b"{", b"}", b"[", b"]", b": ", b"\n", b"  ", b"- ",
          b"---\n", b"...\n", b"!!binary ", b"!!float ", b"!!python/object:os.system ",
          b".inf", b"-.inf", b".nan", b"1.0e+999", b"1e9", b"true", b"~", b"0x1F", b"-1", b"0",
          b"99999999999999999999", b"'", b'"', b"#", b"\t", b"\xff", b"\x00", b"\xc3",
          b"::/0", b"fd00::/8", b"auto", b"l40s-48gb", b"r760xa", b"inference", b"pretrain",
          b"? ", b"|\n", b">\n", b"%YAML 1.2\n", b"@", b"`", b"2024-13-45", b"1:30"]


@st.composite
def byte_mutations(draw: st.DrawFn) -> bytes:
    """An example's bytes, mutated one to six times."""
    data = bytearray(EXAMPLES[draw(st.sampled_from(sorted(EXAMPLES)))])
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["flip", "insert", "token", "cut", "repeat"]))
        if op == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[at:at] = bytes([draw(st.integers(0, 255))])
        elif op == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif op == "cut":
            del data[at:at + draw(st.integers(1, 40))]
        else:
            data[at:at] = data[at:at + draw(st.integers(1, 80))]
    return bytes(data)


def _bomb(levels: int, width: int) -> bytes:
    lines = ["name: bomb", "a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return ("\n".join(lines) + f"\nworkloads: *a{levels - 1}\n").encode()


def _deep(depth: int, flow: bool) -> bytes:
    if flow:
        return b"name: deep\nworkloads: " + b"[" * depth + b"]" * depth + b"\n"
    return b"name: deep\nworkloads:\n" + b"".join(b"  " * i + b"- x:\n" for i in range(1, depth))


attacks = st.one_of(
    st.builds(_bomb, st.integers(2, 12), st.integers(2, 12)),
    st.builds(_deep, st.integers(10, 20_000), st.booleans()),
    st.sampled_from(sorted(EXAMPLES)).map(lambda k: EXAMPLES[k] + EXAMPLES[k]),
    st.sampled_from(sorted(EXAMPLES)).map(lambda k: EXAMPLES[k] * 200),
    st.just(b"name: x\nworkloads: &w [*w]\n"),
    st.just(b"\xef\xbb\xbf" + EXAMPLES["slurm-lab.yaml"]),
    st.just(b""), st.just(b"- a\n- b\n"), st.just(b"just text"),
)

sources = st.one_of(
    st.tuples(st.just("generated"), generated()),
    st.tuples(st.just("field-mutation"), field_mutations()),
    st.tuples(st.just("byte-mutation"), byte_mutations()),
    st.tuples(st.just("attack"), attacks),
)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A spec and a command to run on it."""
    origin, text = draw(sources)
    return Case(origin, text, draw(st.sampled_from(COMMANDS)))

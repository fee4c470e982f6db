"""Golden trees: every example spec renders to exactly the committed expected tree.

``pytest --update-golden`` rewrites ``tests/golden/<example>/``. A missing, extra or changed
file fails with a unified diff of the first differences.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from generator import pipeline
from tests.conftest import EXAMPLES, REPO

GOLDEN = REPO / "tests" / "golden"


def _rendered(example: Path) -> dict[str, str]:
    rel = example.relative_to(REPO).as_posix()
    out = pipeline.outputs(pipeline.load_checked(rel))
    return {f.path: f.content for f in out.files}


def _expected(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_example_renders_to_golden_tree(example: Path, update_golden: bool) -> None:
    root = GOLDEN / example.stem
    got = _rendered(example)
    if update_golden:
        shutil.rmtree(root, ignore_errors=True)
        for path, content in got.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(content, encoding="utf-8")
        return
    want = _expected(root)
    assert want, f"no golden tree for {example.name}; run pytest --update-golden"
    assert sorted(got) == sorted(want), "file lists differ (run pytest --update-golden?)"
    for path in sorted(got):
        if got[path] != want[path]:
            diff = difflib.unified_diff(
                want[path].splitlines(),
                got[path].splitlines(),
                "golden/" + path,
                "now/" + path,
                lineterm="",
                n=2,
            )
            pytest.fail("\n".join(list(diff)[:60]))


@pytest.mark.parametrize("example", EXAMPLES[:2], ids=[e.stem for e in EXAMPLES[:2]])
def test_rendering_is_deterministic(example: Path) -> None:
    assert _rendered(example) == _rendered(example)


def test_every_generated_file_starts_with_provenance() -> None:
    example = REPO / "examples" / "slurm-lab.yaml"
    for path, content in _rendered(example).items():
        head = content[:400]
        assert "podplan" in head and "slurm-lab.yaml" in head, f"{path} lacks the header"

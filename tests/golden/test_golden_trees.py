"""Golden trees: every example spec renders to exactly the committed expected tree.

``pytest --update-golden`` rewrites ``tests/golden/<example>/``. A missing, extra or changed
file fails with a unified diff of the first differences.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import pipeline
from tests.conftest import EXAMPLES, REPO
from tests.tooling import check_golden_tree

GOLDEN = REPO / "tests" / "golden"


def _rendered(example: Path) -> dict[str, str]:
    rel = example.relative_to(REPO).as_posix()
    out = pipeline.outputs(pipeline.load_checked(rel))
    return {f.path: f.content for f in out.files}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_example_renders_to_golden_tree(example: Path, update_golden: bool) -> None:
    check_golden_tree(GOLDEN / example.stem, _rendered(example), update_golden)


@pytest.mark.parametrize("example", EXAMPLES[:2], ids=[e.stem for e in EXAMPLES[:2]])
def test_rendering_is_deterministic(example: Path) -> None:
    assert _rendered(example) == _rendered(example)


def test_every_generated_file_starts_with_provenance() -> None:
    example = REPO / "examples" / "slurm-lab.yaml"
    for path, content in _rendered(example).items():
        # Plain CSV carries its provenance in every row's last two columns, not a comment.
        plain_csv = path.endswith(".csv") and not content.startswith("#")
        head = content.split("\n")[1] if plain_csv else content[:400]
        assert "podplan" in head and "slurm-lab.yaml" in head, f"{path} lacks the header"

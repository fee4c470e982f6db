"""The fast emitter reads back to exactly the data it was given (checked by PyYAML)."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.render.fastyaml import dump

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, width=64)
    | st.text(max_size=20)
    | st.sampled_from(
        [
            "yes",
            "No",
            "on",
            "null",
            "~",
            "1.5",
            "0x10",
            "1e3",
            "2024-01-01",
            "a: b",
            "#x",
            "- y",
            "10.0.0.1/24",
            "/dev/nvidia[0-7]",
            "gpu[001-016]",
            "INFINITE",
            "",
            " lead",
            "tab\tx",
            "multi\nline",
            "@at",
            "*star",
            "&amp",
        ]
    )
)
data = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(data)
def test_round_trips_through_pyyaml(value: Any) -> None:
    assert yaml.safe_load(dump(value)) == value


def test_looks_like_hand_written_yaml() -> None:
    text = dump({"b": [1, {"z": "x", "a": None}], "a": {"k": "v"}, "c": []})
    assert text == "---\na:\n  k: v\nb:\n- 1\n- a: null\n  z: x\nc: []\n"

"""A YAML reader for hand-written specs that cannot be made to hang, exhaust memory or guess.

PyYAML's ``SafeLoader`` runs no code, but it will happily compose a 400-byte alias bomb
(``a: &a [x, x, ...]``, ``b: &b [*a, *a, ...]``) whose expansion then costs minutes and
gigabytes in whatever walks the data, recurse until Python gives up on deep nesting, and keep
the last of two duplicate keys without a word. This loader checks while it composes, before
anything is constructed: the document may be at most ``MAX_DEPTH`` levels deep, use at most
``MAX_ALIASES`` aliases, and expand to at most ``MAX_VALUES`` values counting every alias as
the values it repeats; keys must be unique plain names. Every refusal carries the line and
the field path. It also reads ``1e9`` as a number (YAML 1.2; PyYAML insists on ``1.0e+9``)
and leaves dates as text, since no spec field is a date.
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

import yaml

MAX_SPEC_BYTES = 256 * 1024
"""A spec is a few kilobytes; 256 KiB parses in well under a second in pure Python."""
MAX_DEPTH = 32
"""The deepest spec field is 5 levels down (``workloads[0].model.kv_heads``)."""
MAX_ALIASES = 100
"""Anchors and aliases are fine for sharing a block; a hundred is plenty for any spec."""
MAX_VALUES = 20_000
"""Values after alias expansion: 100x a large real spec, far below what costs time."""

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")

Loc = tuple[str | int, ...]


class SpecYAMLError(yaml.MarkedYAMLError):
    """A refusal of the hardened loader: what is wrong, where (mark) and at which field."""

    def __init__(self, problem: str, mark: Any, loc: Loc = ()) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.loc = loc


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts depth, aliases and expanded size while composing."""

    yaml_implicit_resolvers: dict[Any, list[Any]] = {  # noqa: RUF012 (PyYAML class table)
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._aliases = 0
        self._total = 0
        self._weight: dict[int, int] = {}
        self._loc: list[str | int] = []
        self.where: dict[int, Loc] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        key = index.value if isinstance(index, yaml.ScalarNode) else index
        if key is not None:
            self._loc.append(key)
        try:
            return self._compose(parent, index)
        finally:
            if key is not None:
                self._loc.pop()

    def _compose(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                self._refuse(f"more than {MAX_ALIASES} aliases (*name)", mark)
            node = super().compose_node(parent, index)
            if id(node) not in self._weight:
                self._refuse("an alias may not point at a block that contains it", mark)
            self._count(self._weight[id(node)], mark)
            return node
        self._count(1, self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        self._depth += 1
        if self._depth > MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            self._refuse(f"nested deeper than {MAX_DEPTH} levels", mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._weigh(node)
        return node

    def _count(self, values: int, mark: Any) -> None:
        """Running total of the document's values, aliases counted as what they repeat."""
        self._total += values
        if self._total > MAX_VALUES:
            self._refuse(f"has more than {MAX_VALUES:,} values, counting what aliases repeat",
                         mark)

    def _weigh(self, node: Any) -> None:
        """Remember how many values ``node`` stands for, so an alias to it counts them all."""
        if isinstance(node, yaml.MappingNode):
            parts = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            parts = node.value
        else:
            parts = []
        self._weight[id(node)] = 1 + sum(self._weight.get(id(p), 1) for p in parts)

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        first: dict[str, int] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode):
                self._refuse("a key must be a plain name, not a list or a mapping", key.start_mark)
            if key.tag == _MERGE:
                continue
            if key.tag != _STR:
                self._refuse(f"key '{key.value}' is not a name (quote it if it is one)",
                             key.start_mark)
            if key.value in first:
                self._refuse(f"duplicate key '{key.value}' (first on line {first[key.value]})",
                             key.start_mark, key.value)
            first[key.value] = key.start_mark.line + 1
        return node

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:
            text = str(node.value)
            shown = text if len(text) <= 20 else text[:17] + "..."
            why = "too many digits" if "digits" in str(exc) else str(exc)
            self._loc = list(self.where.get(id(node), ()))
            self._refuse(f"cannot read '{shown}' ({why})", node.start_mark)

    def _refuse(self, problem: str, mark: Any, last: str | None = None) -> NoReturn:
        loc = (*self._loc, last) if last is not None else tuple(self._loc)
        raise SpecYAMLError(problem, mark, loc[:12])


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789"))


def node_lines(node: Any, loc: Loc, out: dict[Loc, int], where: dict[int, Loc]) -> None:
    """Map every key and item path below ``node`` to its 1-based line (``out``) and every
    node to its first path (``where``)."""
    out.setdefault(loc, node.start_mark.line + 1)
    where.setdefault(id(node), loc)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            here = (*loc, key.value)
            out[here] = key.start_mark.line + 1
            node_lines(value, here, out, where)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            node_lines(item, (*loc, i), out, where)


def load(text: str) -> tuple[Any, dict[Loc, int]]:
    """Parse one YAML document into plain data and a path -> line map.

    Raises ``yaml.YAMLError`` (``SpecYAMLError`` for the loader's own refusals).
    """
    loader = _Loader(text)
    lines: dict[Loc, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        node_lines(node, (), lines, loader.where)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    return data, lines

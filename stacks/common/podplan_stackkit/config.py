"""Typed, validated reads of a Pulumi stack's configuration.

Each stack's ``config.py`` reads every key once through a :class:`ConfigReader`, which parses
the raw strings the Pulumi engine hands the program, checks them, and *collects* problems so
the user sees all of them at once in one :class:`ConfigError` instead of fixing them one run
at a time. The reader also remembers which keys were read and with which defaults, so tests
can check that ``Pulumi.yaml`` declares exactly the keys the program reads.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pulumi

_PLACEHOLDER_NET = ipaddress.IPv4Network("0.0.0.0/32")


class ConfigError(Exception):
    """The stack configuration is invalid; the message lists every problem found."""

    def __init__(self, project: str, problems: list[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid {project} stack configuration:\n{lines}")


@dataclass(frozen=True)
class KeyRead:
    """One configuration key the program read: its kind, default and whether it is secret."""

    key: str
    kind: str
    default: Any = None
    secret: bool = False


@dataclass
class ConfigReader:
    """Reads one Pulumi config namespace; invalid values are recorded, not raised at once.

    Every accessor returns a value of the declared type even when the key is invalid (a
    neutral placeholder), so reading can continue and report everything; call
    :meth:`raise_if_invalid` once all keys are read.
    """

    project: str
    config: pulumi.Config | None = None
    problems: list[str] = field(default_factory=list)
    reads: dict[str, KeyRead] = field(default_factory=dict)
    _bad: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.config is None:
            self.config = pulumi.Config(self.project)

    # -- bookkeeping -------------------------------------------------------------------------

    def fail(self, key: str, message: str) -> None:
        """Record a problem with ``key`` (used by cross-field checks too)."""
        self._bad.add(key)
        self.problems.append(f"{self.project}:{key} {message}")

    def ok(self, *keys: str) -> bool:
        """Whether all of ``keys`` were read without a problem."""
        return not self._bad.intersection(keys)

    def raise_if_invalid(self) -> None:
        """Raise one :class:`ConfigError` listing every problem recorded so far."""
        if self.problems:
            raise ConfigError(self.project, self.problems)

    def _raw(self, key: str, kind: str, default: Any) -> str | None:
        self.reads[key] = KeyRead(key, kind, default)
        assert self.config is not None
        return self.config.get(key)

    def _missing(self, key: str, hint: str = "<value>") -> None:
        self.fail(key, f"is required: set it with `pulumi config set {key} {hint}`")

    # -- scalar readers ----------------------------------------------------------------------

    def string(
        self,
        key: str,
        default: str | None = None,
        *,
        pattern: str | None = None,
        choices: Iterable[str] | None = None,
        what: str = "",
    ) -> str:
        """A string, optionally matching ``pattern`` (full match) or one of ``choices``."""
        raw = self._raw(key, "string", default)
        value = default if raw is None else raw
        if value is None:
            self._missing(key)
            return ""
        if pattern is not None and value != "" and not re.fullmatch(pattern, value):
            self.fail(key, f"must be {what or 'of the form ' + pattern} (got {value!r})")
        allowed = list(choices) if choices is not None else None
        if allowed is not None and value not in allowed:
            self.fail(key, f"must be one of {', '.join(allowed)} (got {value!r})")
        return value

    def integer(
        self,
        key: str,
        default: int | None = None,
        *,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int:
        """An integer within ``[minimum, maximum]``."""
        raw = self._raw(key, "integer", default)
        if raw is None:
            if default is None:
                self._missing(key, "<integer>")
                return 0
            return default
        try:
            value = int(raw)
        except ValueError:
            self.fail(key, f"must be an integer (got {raw!r})")
            return 0
        if minimum is not None and value < minimum:
            self.fail(key, f"must be at least {minimum} (got {value})")
        if maximum is not None and value > maximum:
            self.fail(key, f"must be at most {maximum} (got {value})")
        return value

    def number(self, key: str, default: float | None = None, *, minimum: float = 0.0) -> float:
        """A number (integer or decimal) not below ``minimum``."""
        raw = self._raw(key, "number", default)
        if raw is None:
            if default is None:
                self._missing(key, "<number>")
                return 0.0
            return default
        try:
            value = float(raw)
        except ValueError:
            self.fail(key, f"must be a number (got {raw!r})")
            return 0.0
        if value < minimum:
            self.fail(key, f"must be at least {minimum:g} (got {value:g})")
        return value

    def boolean(self, key: str, default: bool | None = None) -> bool:
        """``true`` or ``false``."""
        raw = self._raw(key, "boolean", default)
        if raw is None:
            if default is None:
                self._missing(key, "true|false")
                return False
            return default
        if raw.lower() not in ("true", "false"):
            self.fail(key, f"must be true or false (got {raw!r})")
            return False
        return raw.lower() == "true"

    def cidr(self, key: str, default: str | None = None) -> ipaddress.IPv4Network:
        """An IPv4 network in CIDR form with no host bits set."""
        value = self.string(key, default)
        if not value:
            return _PLACEHOLDER_NET
        try:
            return ipaddress.IPv4Network(value, strict=True)
        except ValueError as exc:
            self.fail(key, f"must be an IPv4 network in CIDR form, e.g. 10.0.0.0/16 ({exc})")
            return _PLACEHOLDER_NET

    def string_list(
        self,
        key: str,
        default: list[str] | None = None,
        *,
        item: Callable[[str], str | None] | None = None,
    ) -> list[str]:
        """A list of strings; ``item`` returns an error message for a bad element, or None."""
        raw = self._raw(key, "array", default)
        if raw is None:
            if default is None:
                self._missing(key, "--path '<key>[0]' <value>")
                return []
            return list(default)
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            self.fail(key, f"must be a list of strings (got {raw!r})")
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(key, f"must be a list of strings (got {raw!r})")
            return []
        if item is not None:
            for v in value:
                err = item(v)
                if err:
                    self.fail(key, f"has an invalid element {v!r}: {err}")
        return list(value)

    def cidr_list(self, key: str) -> list[ipaddress.IPv4Network]:
        """A list of IPv4 networks in CIDR form."""

        def check(v: str) -> str | None:
            try:
                ipaddress.IPv4Network(v, strict=True)
            except ValueError as exc:
                return str(exc)
            return None

        values = self.string_list(key, item=check)
        if not self.ok(key):
            return []
        return [ipaddress.IPv4Network(v) for v in values]

    def secret(self, key: str, hint: str) -> pulumi.Output[str]:
        """A secret the user sets with ``pulumi config set --secret``; podplan never writes it."""
        self.reads[key] = KeyRead(key, "string", None, secret=True)
        assert self.config is not None
        value = self.config.get_secret(key)
        if value is None:
            self._bad.add(key)
            self.problems.append(
                f"{self.project}:{key} is required and secret: "
                f"set it with `pulumi config set --secret {key} {hint}`"
            )
            return pulumi.Output.secret("")
        return value

    # -- composite checks --------------------------------------------------------------------

    def host(self, key: str, net: ipaddress.IPv4Network, number: int) -> str:
        """The ``number``-th address of the subnet in ``key`` (a node's fixed private address)."""
        if not self.ok(key):
            return ""
        if net.num_addresses < 2 * number:
            self.fail(key, f"({net}) is too small to hold host number {number}: widen it")
            return ""
        return _host_address(net, number)

    def tags(self, key: str, base: dict[str, str]) -> dict[str, str]:
        """``base`` tags plus the ``key=value`` strings of the ``key`` list (base wins)."""

        def check(v: str) -> str | None:
            k, sep, _ = v.partition("=")
            return None if sep and k.strip() else "expected key=value"

        extra = self.string_list(key, [], item=check)
        out = {k.strip(): v for k, _, v in (e.partition("=") for e in extra) if k.strip()}
        out.update(base)
        return out

    def subnets_inside(
        self,
        parent_key: str,
        parent: ipaddress.IPv4Network,
        children: dict[str, ipaddress.IPv4Network],
    ) -> None:
        """Each child network lies inside ``parent`` and no two children overlap."""
        if not self.ok(parent_key, *children):
            return
        for key, net in children.items():
            if not net.subnet_of(parent):
                self.fail(key, f"({net}) must lie inside {parent_key} ({parent})")
        names = list(children)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if children[a].overlaps(children[b]):
                    self.fail(b, f"({children[b]}) overlaps {a} ({children[a]})")


def _host_address(net: ipaddress.IPv4Network, offset: int) -> str:
    """The ``offset``-th address of ``net`` (e.g. .10 for the head node), as a string."""
    if offset <= 0 or offset >= net.num_addresses - 1:
        raise ValueError(f"{net} has no host number {offset}")
    return str(net.network_address + offset)


def admin_cidr_problem(net: ipaddress.IPv4Network) -> str | None:
    """Why an admin CIDR is unacceptable (open to the internet), or None."""
    if net.prefixlen == 0:
        return "must not be the whole internet (0.0.0.0/0): use your site's public range"
    return None


def step_problem(
    value: int,
    *,
    step: int,
    minimum: int,
    maximum: int | None,
    unit: str,
    where: str,
    also: tuple[int, ...] = (),
) -> str | None:
    """Why ``value`` is not a valid size: a multiple of ``step`` in ``[minimum, maximum]``, or
    one of ``also``. The message names the nearest valid sizes below and above."""
    in_range = value >= minimum and (maximum is None or value <= maximum)
    if value in also or (in_range and value % step == 0):
        return None
    first = -(-minimum // step) * step
    below = [v for v in also if v < value]
    if value >= first:
        below.append(value // step * step)
    above = [v for v in also if v > value] + [max(first, -(-value // step) * step)]
    if maximum is not None:
        above = [v for v in above if v <= maximum]
        below = [min(v, maximum // step * step) for v in below]
    near = sorted({*([max(below)] if below else []), *([min(above)] if above else [])})
    rule = f"a multiple of {step} {unit}"
    if also:
        rule = f"{' or '.join(str(v) for v in also)} {unit}, or " + rule
    limits = f"from {minimum}" + (f" to {maximum}" if maximum is not None else "") + f" {unit}"
    return (
        f"must be {rule} ({limits}) for {where} (got {value}; nearest valid: "
        f"{' or '.join(str(v) for v in near)})"
    )

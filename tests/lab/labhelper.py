#!/usr/bin/env python3
"""Small helpers for ``lab.sh`` that are easier to get right in Python than in bash.

Subcommands:

``mirror``
    Print the Debian mirror URI this machine's apt sources use for the lab's suite
    (deb822 ``*.sources`` first, then one-line ``sources.list``). Nothing is hard-coded:
    CI machines point at whatever mirror their image was built with.

``hosts INVENTORY``
    Print ``name address frontend rails`` for every host in the ``slurm_cluster`` group of
    a podplan inventory, resolved with ``ansible-inventory --list`` (so the lab sees exactly
    what the playbook sees): the management address (``ansible_host``), the front-end
    address (``-`` if none) and the number of fabric rails. Fails unless every management
    address is a usable host address of the lab network and all addresses are distinct.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
from pathlib import Path

LAB_NETWORK = ipaddress.ip_network("169.254.77.0/24")
# .1 is left free (conventional gateway slot), .2 is the Ansible control namespace.
# Front-end addresses only ever sit on a dummy interface inside a lab namespace.
FRONTEND_NETWORK = ipaddress.ip_network("169.254.0.0/16")
RESERVED = {ipaddress.ip_address("169.254.77.1"), ipaddress.ip_address("169.254.77.2")}


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    key = ""
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, ""
        elif line.startswith("#"):
            continue
        elif line[0] in " \t" and key:
            current[key] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            key = key.strip().lower()
            current[key] = value.strip()
    return stanzas


def mirror(suite: str) -> str:
    """Return the first mirror URI that serves ``suite`` on this machine."""
    apt = Path("/etc/apt")
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in _deb822_stanzas(path.read_text(encoding="utf-8")):
            if stanza.get("enabled", "yes").lower() == "no":
                continue
            if (
                "deb" in stanza.get("types", "").split()
                and suite in stanza.get("suites", "").split()
            ):
                return stanza["uris"].split()[0]
    lists = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            words = line.split("#", 1)[0].split()
            if not words or words[0] != "deb":
                continue
            words = words[1:]
            if words and words[0].startswith("["):
                while words and not words[0].endswith("]"):
                    words = words[1:]
                words = words[1:]
            if len(words) >= 2 and words[1] == suite:
                return words[0]
    raise SystemExit(f"labhelper: no apt source for suite {suite!r} on this machine")


def hosts(inventory: str) -> list[tuple[str, str, str, int]]:
    """Return sorted ``(name, address, frontend, rails)`` of the inventory's Slurm hosts."""
    out = subprocess.run(
        ["ansible-inventory", "-i", inventory, "--list"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out)
    hostvars = data.get("_meta", {}).get("hostvars", {})

    def members(group: str) -> set[str]:
        entry = data.get(group, {})
        found = set(entry.get("hosts", []))
        for child in entry.get("children", []):
            found |= members(child)
        return found

    names = sorted(members("slurm_cluster"))
    if not names:
        raise SystemExit(f"labhelper: inventory {inventory} has no hosts in slurm_cluster")
    pairs: list[tuple[str, str, str, int]] = []
    seen: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, str] = {}
    for name in names:
        raw = hostvars.get(name, {}).get("ansible_host")
        if raw is None:
            raise SystemExit(f"labhelper: host {name} has no ansible_host")
        addr = ipaddress.ip_address(str(raw))
        if (
            addr not in LAB_NETWORK
            or addr in RESERVED
            or addr
            in (
                LAB_NETWORK.network_address,
                LAB_NETWORK.broadcast_address,
            )
        ):
            raise SystemExit(
                f"labhelper: {name} ansible_host={addr} is not a lab address "
                f"({LAB_NETWORK}, excluding .0/.1/.2/.255)"
            )
        if addr in seen:
            raise SystemExit(f"labhelper: {name} and {seen[addr]} share address {addr}")
        seen[addr] = name
        vars_ = hostvars.get(name, {})
        frontend = str(vars_.get("podplan_frontend_address") or "-")
        if frontend != "-" and ipaddress.ip_address(frontend) not in FRONTEND_NETWORK:
            raise SystemExit(f"labhelper: {name} front-end address {frontend} is not link-local")
        rails = len(vars_.get("podplan_fabric_addresses") or [])
        pairs.append((name, str(addr), frontend, rails))
    return pairs


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "mirror":
        print(mirror(argv[1] if len(argv) > 1 else "bookworm"))
        return 0
    if len(argv) == 2 and argv[0] == "hosts":
        for name, addr, frontend, rails in hosts(argv[1]):
            print(name, addr, frontend, rails)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``reports/<name>/bcm/``: the same cluster for sites without the Ansible collections.

Renders the Jinja templates in ``templates/bcm/`` (two ``cmsh -f`` batches, the
``cm-wlm-setup`` command line, the plan's ``topology.conf`` and a README) plus the WLM answers
and the site-values example as YAML. The templates only loop over prepared data; the
cmsh-specific preparation (quoting, ``use`` versus ``add``) is done here.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from generator.emit.bcm.common import (
    MGMT_NETWORK,
    PLACEHOLDER_IFACE,
    PLACEHOLDER_MAC,
    VAULT_VARIABLES,
    _yaml,
)
from generator.emit.bcm.inventory import site_example
from generator.emit.bcm.network import bcm_switches, networks
from generator.emit.bcm.nodes import bcm_nodes, categories, racks, software_images
from generator.emit.bcm.workload import wlm_answers
from generator.plan.models import ClusterPlan
from generator.render.env import render
from generator.render.files import OutFile, commented_header

_BARE = re.compile(r"^[\w@%+=:,./\[\]-]+$")


def _q(value: object) -> str:
    """A cmsh word: bare when safe, else double-quoted with backslash escapes."""
    text = str(value)
    if _BARE.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yn(value: object) -> str:
    """A cmsh boolean (cmsh takes yes/no, not Python's True/False)."""
    return "yes" if value else "no"


def _cmsh_view(plan: ClusterPlan, w: dict[str, Any]) -> dict[str, Any]:
    """The template context of the cmsh batches: the model plus the verb for each object
    (``use`` where BCM or cm-wlm-setup already created it, else ``add``)."""
    nets = [{**n, "verb": "use" if n["name"] == MGMT_NETWORK else "add"}
            for n in networks(plan)]
    overlays = []
    for i, o in enumerate(w["gpu_overlays"]):
        role = o["roles_SlurmClientRole"][0]
        overlays.append({
            "verb": "use" if i == 0 else "add",
            "role_verb": "use" if i == 0 else "assign",
            "name": o["name"],
            "priority": o["priority"],
            "categories": o["categories"],
            "features": role.get("features", []),
            "gres": role["genericResources"],
        })
    queues = [{**jq, "verb": "use" if jq["name"] == "defq" else "add"} for jq in w["queues"]]
    return {
        "spec_file": plan.spec_file,
        "name": plan.name,
        "networks": nets,
        "racks": racks(plan),
        "images": software_images(),
        "categories": categories(plan),
        "nodes": bcm_nodes(plan, PLACEHOLDER_IFACE),
        "switches": bcm_switches(plan),
        "wlm": w,
        "overlays": overlays,
        "queues": queues,
        "q": _q,
        "yn": _yn,
    }


def _topology_lines(plan: ClusterPlan) -> list[str]:
    """The plan's Slurm tree as ``topology.conf`` lines (leaves list nodes, others switches)."""
    lines = []
    for t in plan.scheduler.topology:
        if t.nodes is not None:
            lines.append(f"SwitchName={t.switch} Nodes={','.join(t.nodes)}")
        else:
            lines.append(f"SwitchName={t.switch} Switches={','.join(t.switches or [])}")
    return lines


def _arg_lines(args: list[str]) -> list[str]:
    """cm-wlm-setup arguments one option per line, each with its value, shell-quoted."""
    lines: list[str] = []
    for arg in args:
        if arg.startswith("--") or not lines:
            lines.append(shlex.quote(arg))
        else:
            lines[-1] += " " + shlex.quote(arg)
    return lines


def report_files(plan: ClusterPlan, w: dict[str, Any]) -> list[OutFile]:
    """Every file of ``reports/<name>/bcm/``, in the order ``emit_bcm`` lists them."""
    rep = f"reports/{plan.name}/bcm"
    spec = plan.spec_file
    cmsh = _cmsh_view(plan, w)
    return [
        OutFile(f"{rep}/cluster.cmsh", render("bcm/cluster.cmsh.jinja", **cmsh)),
        OutFile(f"{rep}/wlm.cmsh", render("bcm/wlm.cmsh.jinja", **cmsh)),
        OutFile(f"{rep}/cm-wlm-setup.sh", render(
            "bcm/cm-wlm-setup.sh.jinja", spec_file=spec, name=plan.name,
            args=_arg_lines(w["setup_args"]))),
        OutFile(f"{rep}/cm-wlm-setup.yaml", _yaml(wlm_answers(w), spec, [
            "", "NOT the file 'cm-wlm-setup -c' reads: that YAML format is NOT PUBLICLY",
            "DOCUMENTED (the TUI's summary screen saves one). These are the same answers as",
            "data, keyed by the documented CLI options: run cm-wlm-setup.sh, or enter them in",
            "the TUI (Setup (Step by Step)) and save its config for reuse with -c."])),
        OutFile(f"{rep}/topology.conf", render(
            "bcm/topology.conf.jinja", spec_file=spec, lines=_topology_lines(plan))),
        OutFile(f"{rep}/bcm-site.example.yml", _yaml(site_example(plan), spec, [
            "", "Site values podplan cannot know. Copy this file OUTSIDE the generated tree",
            f"(e.g. ansible/.secrets/{plan.name}/bcm-site.yml), replace every FILL-IN and pass",
            "it with -e @<file> (ansible/BCM.md). Optional: bcm_site_license_mac, the MAC for",
            "the licence request (default: the head node's default-route interface), and for",
            "install_medium network or local the role's install_medium_network_packages or",
            "install_medium_local_repo_path."])),
        OutFile(f"{rep}/README.md", render(
            "bcm/README.md.jinja", header=commented_header(spec, ">"), name=plan.name,
            wlm=w, nodes=len(cmsh["nodes"]), switches=len(cmsh["switches"]),
            vault_list=", ".join(f"`{v}`" for v in VAULT_VARIABLES),
            placeholder_mac=PLACEHOLDER_MAC)),
    ]

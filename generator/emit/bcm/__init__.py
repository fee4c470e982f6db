"""ClusterPlan -> NVIDIA Base Command Manager (BCM 11) configuration as code.

For ``provisioning.scheduler: bcm`` podplan writes:

- ``inventories/<name>/``: ``hosts.yml`` (group ``bcm_headnodes`` = the HA pair, children
  ``bcm_primary`` / ``bcm_secondary``) and ``group_vars/`` split by concern, read by the static
  playbook ``ansible/bcm.yml`` (head-node install with ``brightcomputing.installer110``, cluster
  definition with the ``brightcomputing.bcm110`` entity modules). Entity data is already in the
  shape of the modules' documented options, so the playbook passes it through unchanged.
- ``reports/<name>/bcm/``: the same definitions for sites without the collections: two
  ``cmsh -f`` batch files (before and after the WLM exists), the exact ``cm-wlm-setup`` command
  line, the plan's Slurm tree, an example site-values file and a README.

Everything is computed in this package from the plan; ``templates/bcm/*.jinja`` only loop
over prepared data. Field names are the documented ones (``ansible/BCM-SOURCES.md``); what
public documentation does not settle is marked ``NOT PUBLICLY DOCUMENTED`` in the output.

The package is split along the model's seams: ``common`` (object names, placeholders, small
conversions), ``network`` (networks, switches), ``nodes`` (racks, image, categories, physical
nodes), ``workload`` (cm-wlm-setup and the Slurm WLM), ``inventory`` (the Ansible files) and
``reports`` (the cmsh / cm-wlm-setup / topology renderings). The names below are re-exported
so ``generator.emit.bcm`` keeps the interface it had as a single module.
"""

from __future__ import annotations

from generator.emit.bcm.common import (
    BASE_CATEGORY,
    BASE_IMAGE,
    BCM_NODE_ROLES,
    BMC_INTERFACE,
    BOOT_INTERFACE,
    CMD_PYTHON,
    FRONTEND_IFACE_VAR,
    FRONTEND_NETWORK,
    GENERATED_BY,
    GPU_IMAGE,
    GPU_OVERLAY,
    GPU_OVERLAY_PRIORITY,
    LOGIN_CATEGORY,
    MGMT_NETWORK,
    OOB_NETWORK,
    PLACEHOLDER,
    PLACEHOLDER_IFACE,
    PLACEHOLDER_MAC,
    SWITCH_MGMT_INTERFACE,
    VAULT_VARIABLES,
    ib_interface,
    ib_network,
    rack_position,
    switch_port,
)
from generator.emit.bcm.inventory import (
    hosts_document,
    installer,
    inventory_files,
    site_example,
)
from generator.emit.bcm.network import bcm_switches, networks
from generator.emit.bcm.nodes import (
    bcm_nodes,
    categories,
    category_of,
    racks,
    software_images,
)
from generator.emit.bcm.reports import report_files
from generator.emit.bcm.workload import (
    gpu_overlays,
    job_queues,
    setup_args,
    topology,
    wlm,
    wlm_answers,
)
from generator.plan.models import ClusterPlan
from generator.render.files import OutFile

__all__ = [
    "BASE_CATEGORY",
    "BASE_IMAGE",
    "BCM_NODE_ROLES",
    "BMC_INTERFACE",
    "BOOT_INTERFACE",
    "CMD_PYTHON",
    "FRONTEND_IFACE_VAR",
    "FRONTEND_NETWORK",
    "GENERATED_BY",
    "GPU_IMAGE",
    "GPU_OVERLAY",
    "GPU_OVERLAY_PRIORITY",
    "LOGIN_CATEGORY",
    "MGMT_NETWORK",
    "OOB_NETWORK",
    "PLACEHOLDER",
    "PLACEHOLDER_IFACE",
    "PLACEHOLDER_MAC",
    "SWITCH_MGMT_INTERFACE",
    "VAULT_VARIABLES",
    "bcm_nodes",
    "bcm_switches",
    "categories",
    "category_of",
    "emit_bcm",
    "gpu_overlays",
    "hosts_document",
    "ib_interface",
    "ib_network",
    "installer",
    "job_queues",
    "networks",
    "rack_position",
    "racks",
    "setup_args",
    "site_example",
    "software_images",
    "switch_port",
    "topology",
    "wlm",
    "wlm_answers",
]


def emit_bcm(plan: ClusterPlan) -> list[OutFile]:
    """Every BCM file: ``inventories/<name>/`` and ``reports/<name>/bcm/``.

    The WLM bundle is built once and shared, since both halves describe the same WLM.
    """
    w = wlm(plan)
    return [*inventory_files(plan, w), *report_files(plan, w)]

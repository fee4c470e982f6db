"""Reliability (checkpointing, interruptions, goodput) and what was written, with the
commands that use it."""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

from generator.emit.report.blocks import Block, Code, Figure, Para, Section, facts_table
from generator.emit.report.charts import Stack, stacked_bars
from generator.emit.report.tables import Column, Table, count, hours, plain
from generator.plan.models import ClusterPlan, Reliability

#: A directory with more generated files than this is listed as one row with its count.
LIST_FILES_UP_TO = 12


def wallclock_parts(plan: ClusterPlan) -> tuple[tuple[str, float], ...]:
    """Compute, checkpoint writes and lost work + restarts, hours (Young/Daly split)."""
    rel = plan.reliability
    checkpoints = rel.checkpoint_hours
    lost = max(rel.wallclock_hours - rel.compute_hours - checkpoints, 0.0)
    return (("compute", rel.compute_hours), ("checkpoint writes", checkpoints),
            ("lost work and restarts", lost))


def _checkpoints(rel: Reliability) -> str:
    every = hours(rel.checkpoint_interval_hours)
    if rel.final_checkpoint_only:
        return (f"The run is shorter than one checkpoint interval ({every}, Young/Daly): it "
                f"writes only its final checkpoint ({rel.checkpoint_write_s:,.0f} s)")
    return f"Checkpoint every {every} (Young/Daly; one write takes {rel.checkpoint_write_s:,.0f} s)"


def reliability_section(plan: ClusterPlan) -> Section:
    """Young/Daly figures and the wall-clock split."""
    rel = plan.reliability
    if not plan.sizing.training:
        return Section("reliability", "Reliability", [
            Para("No training run in this plan: checkpointing and goodput do not apply."),
            facts_table("reliability-facts", "Reliability", rel),
        ])
    parts = wallclock_parts(plan)
    svg = stacked_bars("chart-wallclock", "Where the wall-clock goes", "hours",
                       [Stack("training run", parts)])
    blocks: list[Block] = [
        Para(f"{_checkpoints(rel)}; {rel.expected_interruptions:.3g} "
             f"interruptions expected over {hours(rel.wallclock_hours)} at "
             f"{rel.failures_per_gpu_hour:.3g} per GPU-hour; goodput {rel.goodput:.1%}; "
             f"{rel.spares} hot spare node(s)."),
        Figure(svg, "Wall-clock time of the training run(s): compute, checkpoint writes, and "
                    "work lost to interruptions plus restarts."),
        facts_table("reliability-facts", "Reliability", rel),
    ]
    return Section("reliability", "Reliability", blocks)


def _written_rows(paths: list[str]) -> list[tuple[str, int]]:
    per_dir = Counter(str(PurePosixPath(p).parent) for p in paths)
    rows: dict[str, int] = {}
    for p in paths:
        parent = str(PurePosixPath(p).parent)
        key = f"{parent}/ ({per_dir[parent]:,} files)" if per_dir[parent] > LIST_FILES_UP_TO else p
        rows[key] = rows.get(key, 0) + 1
    return sorted(rows.items())


def _commands(plan: ClusterPlan) -> list[str]:
    name = plan.name
    out = [f"podplan plan {plan.spec_file}          # regenerate everything here"]
    if plan.scheduler_kind == "slurm":
        play = f"ansible-playbook -i inventories/{name} ansible"
        out.append("export ANSIBLE_CONFIG=ansible/ansible.cfg  # forks, facts once per run")
        out.append(f"{play}/preflight.yml   # nodes vs plan; installs only slurmd")
        out.append(f"{play}/site.yml")
        out.append(f"{play}/acceptance.yml  # re-check a running cluster")
    else:
        out.append(f"ansible-playbook -i inventories/{name} ansible/bcm.yml \\\n"
                   f"    -e @ansible/.secrets/{name}/bcm-site.yml \\\n"
                   f"    -e @ansible/.secrets/{name}/bcm-vault.yml --ask-vault-pass")
    for c in plan.cloud:
        out.append(f"cd stacks/{c.provider} && pulumi stack init {name} && pulumi install && "
                   "pulumi up")
    return out


def outputs_section(plan: ClusterPlan, written: list[str]) -> Section:
    """Files written from this plan, and the commands that deploy them."""
    rows = [[plain(k), count(n)] for k, n in _written_rows(sorted(written))]
    table = Table("written", f"Written by podplan plan: {len(written):,} files",
                  [Column("Path"), Column("Files", True)], rows)
    how = ("Slurm with Ansible (ansible/site.yml), then the acceptance play"
           if plan.scheduler_kind == "slurm" else
           "NVIDIA Base Command Manager (ansible/bcm.yml; see ansible/BCM.md for the secrets "
           "and site file it needs)")
    return Section("outputs", "What was written and how to use it", [
        table,
        Para(f"Deploy on premises with {how}; the cloud equivalent with Pulumi "
             "(see stacks/README.md)."),
        *_before_site(plan),
        Code("Commands", _commands(plan)),
    ])


def _before_site(plan: ClusterPlan) -> list[Block]:
    """What an admin writes before the first site.yml: the two files podplan never writes.
    Without the accounts file the run and the acceptance ladder (root) pass, yet enforced
    associations refuse every other user's job."""
    if plan.scheduler_kind != "slurm":
        return []
    inv = f"inventories/{plan.name}/group_vars"
    return [Para(f"Before the first site.yml, write {inv}/slurm_cluster/accounts.yml (accounts "
                 "and users: accounting enforces associations, so a user without one cannot "
                 f"submit jobs) and, for site settings, {inv}/all/site.yml (ansible/README.md, "
                 "sections 4 and 5). Both are yours: podplan never writes them, and site.yml "
                 "stops on a variable in them that no role reads. On a running cluster, "
                 "--check --diff shows what a run would change.")]

"""What ``podplan plan --diff`` and ``--check`` print: an ``Update`` and a plan diff as lines.

Pure functions of data (the CLI prints them), so tests read exactly what a user sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from generator.render.diff import diff_plans, format_diff
from generator.render.files import OutFile
from generator.render.update import Update
from generator.render.write import pending


def _capped(lines: list[str], limit: int | None) -> list[str]:
    if limit is None or len(lines) <= limit:
        return lines
    return [*lines[:limit], f"    ... and {len(lines) - limit:,} more (--verbose lists all)"]


def file_lines(u: Update, limit: int | None) -> list[str]:
    """Files that would be added (+), changed (~) or removed (-), refusals and notes."""
    n = len(u.added) + len(u.changed) + len(u.removed)
    out = [f"files: {len(u.added):,} added, {len(u.changed):,} changed, {len(u.removed):,} "
           f"removed, {len(u.unchanged):,} unchanged under {u.out_dir}"]
    changes = sorted([(p, "+") for p in u.added] + [(p, "~") for p in u.changed]
                     + [(p, "-") for p in u.removed])  # fmt: skip
    out += _capped([f"  {mark} {u.out_dir / p}" for p, mark in changes], limit if n else None)
    if u.refusals:
        out.append("refused without --force (your changes):")
        out += [f"  ! {u.out_dir / r.path}: {r.reason}" for r in u.refusals]
    out += [f"note: {x}" for x in u.notes]
    out += [f"note: {j}: an interrupted run; `podplan plan` rolls it back first"
            for j in pending(u.out_dir)]
    return out


def _on_disk(path: Path, default: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return default


_EMPTY = {"plan.yaml": "---\n{}\n", "cabling.csv": "", "bom.json": "{}"}


def plan_lines(out_dir: Path, files: Sequence[OutFile], name: str, limit: int | None) -> list[str]:
    """The plan-level diff of the new files against ``reports/<name>/`` on disk."""
    base = f"reports/{name}"
    new = {f.path: f.content for f in files}
    after = (new.get(f"{base}/plan.yaml", _EMPTY["plan.yaml"]),
             new.get(f"{base}/cabling.csv", ""), new.get(f"{base}/bom.json", "{}"))
    head = []
    if not (out_dir / base / "plan.yaml").is_file():
        head = [f"no plan under {out_dir / base} yet: everything below is new"]
    before = (_on_disk(out_dir / base / "plan.yaml", _EMPTY["plan.yaml"]),
              _on_disk(out_dir / base / "cabling.csv", ""),
              _on_disk(out_dir / base / "bom.json", "{}"))
    return head + format_diff(diff_plans(before, after), limit)


def check_lines(u: Update) -> list[str]:
    """``--check``: one line per path regeneration would touch, then the verdict."""
    if u.up_to_date:
        return [f"up to date: {u.out_dir}"]
    out = [f"would add {u.out_dir / p}" for p in u.added]
    out += [f"would change {u.out_dir / p}" for p in u.changed]
    out += [f"would remove {u.out_dir / p}" for p in u.removed]
    out += [f"edited by you: {u.out_dir / r.path}: {r.reason}" for r in u.refusals]
    out += [f"interrupted run to roll back: {j}" for j in pending(u.out_dir)]
    out.append(f"out of date: {u.out_dir} ({len(u.added)} to add, {len(u.changed)} to change, "
               f"{len(u.removed)} to remove, {len(u.refusals)} edited by you)")
    return out

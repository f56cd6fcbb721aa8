"""The exact commands `fix --yes` would run for a plan, filled in before anything runs (dry run, the TUI)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from envdoctor.fix_journal import state_dir
from envdoctor.install.installer import build_commands, describe_env, find_uv
from envdoctor.snapshot import Snapshot
from envdoctor.wheels.planner import Plan


def attach_commands(plan: Plan, snapshot: Snapshot, python_path: Optional[str], state_root: Path,
                    use_uv: bool = True) -> None:
    """Set `plan.commands`: for the interpreter at `python_path`, or (a snapshot from elsewhere, python_path None)
    with the snapshot's interpreter and a WHEELHOUSE placeholder."""
    if not plan.packages:
        return
    if python_path:
        desc = describe_env(python_path)
        wheelhouse = str(state_dir(desc["prefix"], state_root) / "wheelhouse")
        plan.commands = build_commands(plan, python_path, wheelhouse, find_uv(use_uv), has_pip=desc["has_pip"])
    else:
        exe = getattr(snapshot.python, "executable", None)
        plan.commands = build_commands(plan, exe if isinstance(exe, str) and exe else "python", "WHEELHOUSE", None)

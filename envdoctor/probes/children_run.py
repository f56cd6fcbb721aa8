"""Run a child script in the target interpreter and decode its one JSON line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

from envdoctor.probes.base import ProbeContext
from envdoctor.processes import CommandResult, run_command

CHILDREN = Path(__file__).parent / "children"


class ChildError(RuntimeError):
    def __init__(self, message: str, result: CommandResult) -> None:
        super().__init__(message)
        self.result = result


def _run(ctx: ProbeContext, script: str, timeout: float) -> CommandResult:
    env = dict(ctx.env)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return run_command([ctx.python, str(CHILDREN / script)], timeout=timeout, env=env)


def run_child_lines(ctx: ProbeContext, script: str, timeout: float) -> Tuple[List[Dict[str, Any]], CommandResult]:
    """Every JSON object the child printed (one per line) before it exited, crashed or timed out."""
    res = _run(ctx, script, timeout)
    objects: List[Dict[str, Any]] = []
    for line in res.stdout.splitlines():
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                objects.append(value)
    return objects, res


def run_child(ctx: ProbeContext, script: str, timeout: float) -> Dict[str, Any]:
    """Return the child's JSON object; raise ChildError (crash, timeout, garbage) with a clear message."""
    res = _run(ctx, script, timeout)
    if res.error:
        raise ChildError(f"{ctx.python} {script}: {res.error}", res)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), None)
    if res.returncode != 0 or line is None:
        raise ChildError(res.describe(), res)
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ChildError(f"{script} printed invalid JSON: {exc}", res) from None
    if not isinstance(data, dict):
        raise ChildError(f"{script} printed {type(data).__name__}, not an object", res)
    return data

"""A uv-managed project: the target environment is the `.venv` of a directory with a `uv.lock`.

Its packages belong to pyproject.toml and uv.lock; the next `uv sync` removes whatever was installed into
`.venv` by hand. So `fix` plans project commands there (`uv add` with the PyTorch index as a named, explicit
index, then `uv sync`), prints them, and does not install into `.venv` itself."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Mapping, Optional

from envdoctor.redact import scrub_secrets
from envdoctor.wheels.planner import Plan


def project_of(prefix: str, cwd: str, environ: Mapping[str, str]) -> Optional[Path]:
    """The uv project whose environment `prefix` is: `<project>/.venv` (or UV_PROJECT_ENVIRONMENT) next to a
    uv.lock, in the prefix's parent or the working directory. None: not a uv project's environment."""
    real = os.path.realpath(prefix)
    for project in dict.fromkeys([os.path.dirname(real), os.path.realpath(cwd)]):
        if not os.path.isfile(os.path.join(project, "uv.lock")):
            continue
        env_dir = environ.get("UV_PROJECT_ENVIRONMENT") or ".venv"
        if os.path.realpath(os.path.join(project, env_dir)) == real:
            return Path(project)
    return None


def index_name(variant: str) -> str:
    return f"pytorch-{variant}"


def project_commands(plan: Plan, project: Path) -> List[List[str]]:
    """`uv add` per index (PyTorch's variant index named and explicit, so only torch & co. come from it),
    then `uv sync`. A package built on torch (DeepSpeed) is added without build isolation."""
    commands: List[List[str]] = []
    by_index: dict = {}
    for p in plan.packages:
        by_index.setdefault((p.index_url or "", p.variant if p.index_url else ""), []).append(p)
    for (url, variant), packages in by_index.items():
        cmd = ["uv", "add", "--project", str(project)]
        if url:
            cmd += ["--index", f"{index_name(variant)}={scrub_secrets(url)}"]
        else:
            cmd += [arg for p in packages for arg in ("--no-build-isolation-package", p.name)]
        commands.append(cmd + [p.pin for p in packages])
    commands.append(["uv", "sync", "--project", str(project)])
    return commands


def refusal(project: Path, prefix: str) -> str:
    return (f"{prefix} is the environment of the uv project {project} (uv.lock): an install into it by hand is undone "
            "by the next `uv sync`; run the plan's `uv add ... && uv sync` commands (`envdoctor fix --dry-run` prints "
            "them), or fix another environment with --python")

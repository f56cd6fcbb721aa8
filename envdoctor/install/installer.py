"""Carry out a plan in a target interpreter, and put everything back when anything fails.

Steps: (1) describe the environment (every distribution, its files); (2) `pip download` the exact pins
into a wheelhouse: the torch index is added with --extra-index-url, everything else comes from the
user's own pip configuration (mirrors, certificates), and pip checks the index's hashes. A failure
here has changed nothing. (3) keep the files of every installed distribution the wheelhouse replaces
(hard links, copies across file systems) and list the install directories; (4) install from the
wheelhouse only (`pip install --no-index --find-links`, or `uv pip install --python`); (5) verify in
a child of the target interpreter. Any failure or interruption in (4)-(5): files that were not there
are removed, files that were are put back, and the distribution list must equal the one before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from envdoctor.compat import parse_cc, serving_kernel, variant_cuda
from envdoctor.errors import InputError
from envdoctor.probes.children_run import CHILDREN
from envdoctor.processes import run_command, sigterm_as_interrupt
from envdoctor.wheels.planner import Plan

Progress = Callable[[str], None]


class InstallFailed(Exception):
    """A step failed; the environment is rolled back by the caller."""


@dataclass
class Outcome:
    status: str  # installed | rolled_back | nothing_to_do
    message: str
    commands: List[List[str]] = field(default_factory=list)
    before: Dict[str, str] = field(default_factory=dict)
    after: Dict[str, str] = field(default_factory=dict)
    rollback_ok: Optional[bool] = None


def state_dir(prefix: str, state_root: Path) -> Path:
    """Per-environment state under `state_root` (Settings.state_root): the last fix and the files it replaced."""
    key = hashlib.sha256(os.path.realpath(prefix).encode()).hexdigest()[:16]
    return state_root / key


def describe_env(python: str, files: bool = False, timeout: float = 120.0) -> Dict[str, Any]:
    argv = [python, str(CHILDREN / "install_env_child.py")] + (["--files"] if files else [])
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8")
    res = run_command(argv, timeout, env=env)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), None)
    if res.error or res.returncode != 0 or line is None:
        why = res.describe() if res.error else (res.stderr.strip().splitlines() or ["?"])[-1][:300]
        raise InputError(f"{python}: cannot describe the environment: {why}")
    try:
        return json.loads(line)
    except ValueError:
        raise InputError(f"{python}: cannot describe the environment: it printed invalid JSON: {line[:200]}") from None


def versions(desc: Dict[str, Any]) -> Dict[str, str]:
    return {d["name"]: d["version"] for d in desc["dists"]}


def find_uv(use_uv: bool = True) -> Optional[str]:
    """uv on PATH, unless the user chose pip (ENVDOCTOR_INSTALLER=pip, read into Settings.use_uv)."""
    return shutil.which("uv") if use_uv else None


def build_commands(plan: Plan, python: str, wheelhouse: str, uv: Optional[str], pins: Optional[List[str]] = None,
                   has_pip: bool = True) -> List[List[str]]:
    """The exact argv lists `fix --yes` runs: download (pip), then install from the wheelhouse only."""
    pins = pins or [p.pin for p in plan.packages]
    extra: List[str] = []
    for url in dict.fromkeys(p.index_url for p in plan.packages if p.index_url):
        extra += ["--extra-index-url", url]
    if has_pip:
        download = [python, "-m", "pip", "download", "--dest", wheelhouse, "--progress-bar", "off", *extra, *pins]
    else:  # a uv-made venv without pip: envdoctor's own pip downloads binary wheels for the target's Python
        download = [sys.executable, "-m", "pip", "download", "--dest", wheelhouse, "--only-binary=:all:",
                    "--python-version", plan.python.rstrip("t"), *extra, *pins]
    if uv:
        install = [uv, "pip", "install", "--python", python, "--no-index", "--find-links", wheelhouse, *pins]
    else:
        install = [python, "-m", "pip", "install", "--no-index", "--find-links", wheelhouse, "--progress-bar", "off", *pins]
    return [download, install]


# --- file-level backup and restore --------------------------------------------------------------


def _roots(desc: Dict[str, Any]) -> List[Path]:
    roots = {desc["paths"].get(k) for k in ("purelib", "platlib", "scripts")}
    return sorted(Path(r) for r in roots if r and os.path.isdir(r))


def listing(roots: List[Path]) -> Dict[str, Tuple[int, int]]:
    """path -> (size, mtime_ns) of every file under the install directories."""
    out: Dict[str, Tuple[int, int]] = {}
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[p] = (st.st_size, st.st_mtime_ns)
    return out


def _keep(src: str, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)  # pip and uv unlink before writing, so a hard link keeps the old content
    except OSError:
        shutil.copy2(src, dst)


def backup(desc: Dict[str, Any], names: List[str], dest: Path) -> Dict[str, Any]:
    """Keep every file of these installed distributions under dest/files/<absolute path>."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "files").mkdir(parents=True)
    kept: List[str] = []
    for d in desc["dists"]:
        if d["name"] not in names:
            continue
        for f in d.get("files") or []:
            if os.path.lexists(f) and not os.path.isdir(f):
                _keep(f, dest / "files" / f.lstrip(os.sep).replace(":", ""))
                kept.append(f)
    manifest = {"dists": {d["name"]: d["version"] for d in desc["dists"] if d["name"] in names}, "files": kept}
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def restore(before: Dict[str, Tuple[int, int]], roots: List[Path], bdir: Path) -> List[str]:
    """Remove what was added under the roots, put back what was changed or removed; return what could not be."""
    now = listing(roots)
    problems: List[str] = []
    for p in sorted(set(now) - set(before), reverse=True):
        try:
            os.unlink(p)
        except OSError as exc:
            problems.append(f"cannot remove {p}: {exc}")
    for p, stat in before.items():
        cur = now.get(p)
        if cur == stat and os.path.lexists(p):
            continue
        src = bdir / "files" / p.lstrip(os.sep).replace(":", "")
        if not os.path.lexists(src):
            if p.endswith(".pyc"):
                continue  # byte code is rebuilt on import
            problems.append(f"no backup of {p}")
            continue
        if os.path.lexists(p):
            os.unlink(p)
        Path(p).parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), p)
        else:
            try:
                os.link(src, p)
            except OSError:
                shutil.copy2(src, p)
    _prune_dirs(roots, before)
    return problems


def _prune_dirs(roots: List[Path], before: Dict[str, Tuple[int, int]]) -> None:
    keep_dirs = {os.path.dirname(p) for p in before}
    for root in roots:
        for dirpath, dirs, files in os.walk(root, topdown=False):
            if dirpath in keep_dirs or Path(dirpath) in roots or files or any(
                    os.path.exists(os.path.join(dirpath, d)) for d in dirs):
                continue
            if not any(k.startswith(dirpath + os.sep) for k in keep_dirs):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass


def undo_by_record(desc_now: Dict[str, Any], before: Dict[str, str], bdir: Path) -> List[str]:
    """Undo a finished fix: remove the files of every distribution it added or changed, restore the kept ones."""
    problems: List[str] = []
    manifest = json.loads((bdir / "manifest.json").read_text())
    for d in desc_now["dists"]:
        if before.get(d["name"]) == d["version"]:
            continue
        for f in d.get("files") or []:
            if os.path.lexists(f) and not os.path.isdir(f):
                try:
                    os.unlink(f)
                except OSError as exc:
                    problems.append(f"cannot remove {f}: {exc}")
            if f.endswith(".py"):
                cache = Path(f).parent / "__pycache__"
                for pyc in cache.glob(Path(f).stem + ".*.pyc") if cache.is_dir() else []:
                    pyc.unlink()
    for f in manifest["files"]:
        src = bdir / "files" / f.lstrip(os.sep).replace(":", "")
        Path(f).parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(f):
            os.unlink(f)
        try:
            os.link(src, f)
        except OSError:
            shutil.copy2(src, f)
    return problems


# --- running the tools --------------------------------------------------------------------------


def _stream(argv: List[str], env: Dict[str, str], progress: Progress, timeout: float) -> int:
    """Run argv, echo its output as progress; its exit code (negative: killed by that signal).

    Raises InstallFailed when it cannot start or runs past `timeout`; KeyboardInterrupt passes through
    (the gateway has killed the command's whole tree by then)."""
    progress("$ " + " ".join(argv))
    res = run_command(argv, timeout, env=env, merge_stderr=True, on_line=lambda line: progress("  " + line.rstrip()),
                      max_bytes=0)
    if res.timed_out:
        raise InstallFailed(f"{Path(argv[0]).name} timed out after {timeout:g}s")
    if res.error or res.returncode is None:
        raise InstallFailed(res.describe())
    return res.returncode


def wheelhouse_names(wheelhouse: Path) -> List[str]:
    """The canonical project names of the wheels and source archives pip downloaded."""
    names = []
    for f in wheelhouse.iterdir():
        try:
            if f.name.endswith(".whl"):
                names.append(parse_wheel_filename(f.name)[0])
            elif f.name.endswith((".tar.gz", ".zip")):
                names.append(parse_sdist_filename(f.name)[0])
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue  # not something pip installs from
    return sorted({canonicalize_name(n) for n in names})


def verify(python: str, plan: Plan, exact: Dict[str, str], ccs: List[str], timeout: float) -> List[str]:
    torch = plan.torch
    want = {"torch": exact.get("torch") if torch else None, "cuda": None, "gpus": bool(torch and ccs),
            "packages": {p.name: exact[p.name] for p in plan.packages if p.name in exact and "*" not in exact[p.name]}}
    if torch is not None:
        want["cuda"] = variant_cuda(torch.variant)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    res = run_command([python, str(CHILDREN / "install_verify_child.py"), json.dumps(want)], timeout, env=env)
    if res.timed_out:
        return [f"verification did not finish in {timeout:g}s"]
    if res.error:
        return [f"verification could not run: {res.describe()}"]
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")), None)
    if line is None:
        tail = (res.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return [f"verification crashed (exit {res.returncode}): {tail}"]
    return verify_problems(json.loads(line), ccs)


def verify_problems(report: Dict[str, Any], ccs: List[str]) -> List[str]:
    """The verify child's problems, plus every planned GPU and every device the child saw that torch's
    arch list has no kernel for (decided here, by compat.serving_kernel, not in the child)."""
    problems = [str(p) for p in report.get("problems") or []]
    archs = report.get("arch_list")
    if not isinstance(archs, list):
        return problems  # torch did not import, or no GPU to check
    seen = [str(c) for c in report.get("device_capabilities") or []]
    for cc in sorted(set(ccs) | set(seen), key=parse_cc):
        match = serving_kernel(archs, cc)
        if not match:
            problems.append(match.why)
    return problems


def execute(plan: Plan, python: str, ccs: List[str], progress: Progress, state_root: Path, use_uv: bool = True,
            break_system_packages: bool = False, timeout: float = 3600.0, verify_timeout: float = 300.0) -> Outcome:
    """Install a plan in the target interpreter; on any failure put the environment back (status rolled_back).
    `state_root` holds the per-environment state (Settings.state_root); `use_uv` False means pip only."""
    from envdoctor.install.resolve import resolve_versions

    desc = describe_env(python, files=True)
    if desc["externally_managed"] and not break_system_packages:
        raise InputError(f"{python}: this environment is managed by the system (PEP 668); use a virtual environment, "
                         "or pass --break-system-packages")
    before_versions = versions(desc)
    sdir = state_dir(desc["prefix"], state_root)
    sdir.mkdir(parents=True, exist_ok=True)
    wheelhouse = sdir / "wheelhouse"
    if wheelhouse.exists():
        shutil.rmtree(wheelhouse)
    wheelhouse.mkdir()

    # Exact versions, read from the variant index where it answers.
    exact = {p.name: p.version for p in plan.packages}
    wants = {p.name: (".".join(p.version.split(".")[:2]), p.variant) for p in plan.packages if p.variant and p.index_url}
    base = next((p.index_url.rsplit("/", 1)[0] for p in plan.packages if p.index_url), "")
    if wants and base:
        found, notes = resolve_versions(base, wants, plan.python or desc["python"],
                                        plan.platform)
        for n in notes:
            progress(n)
        for name, ver in found.items():
            exact[name] = ver
    pins = []
    for p in plan.packages:
        ver = exact[p.name]
        # A series the index could not resolve ("0.29.*") cannot carry a local label; pip picks within it.
        exact[p.name] = ver if "+" in ver or "*" in ver or not p.variant else f"{ver}+{p.variant}"
        pins.append(f"{p.name}=={exact[p.name]}")
    uv = find_uv(use_uv)
    commands = build_commands(plan, python, str(wheelhouse), uv, pins, has_pip=desc["has_pip"])
    if not desc["has_pip"] and not uv:
        raise InputError(f"{python}: neither pip in the environment nor uv on PATH")
    env = dict(os.environ)
    env.update(plan.env)
    outcome = Outcome("rolled_back", "", commands, before=before_versions)

    # SIGTERM rolls back like Ctrl-C; signal handlers can only be set from the main thread (the TUI runs this in a worker).
    in_main = threading.current_thread() is threading.main_thread()
    old_term = signal.getsignal(signal.SIGTERM)
    if in_main:
        signal.signal(signal.SIGTERM, sigterm_as_interrupt)
    try:
        try:
            progress("downloading (nothing in the environment changes yet)")
            rc = _stream(commands[0], env, progress, timeout)
        except KeyboardInterrupt:
            outcome.message = "interrupted while downloading; nothing was changed"
            outcome.rollback_ok = True
            return outcome
        except InstallFailed as exc:  # pip missing or past the deadline
            outcome.message = f"download failed: {exc}; nothing was changed"
            outcome.rollback_ok = True
            return outcome
        if rc != 0:
            outcome.message = f"download failed (exit {rc}); nothing was changed"
            outcome.rollback_ok = versions(describe_env(python)) == before_versions
            return outcome
        names = wheelhouse_names(wheelhouse)
        replaced = [n for n in names if n in before_versions]
        progress(f"keeping the files of {', '.join(replaced) or 'nothing'} for a rollback")
        roots = _roots(desc)
        bdir = sdir / "pending"
        backup(desc, replaced, bdir)
        before_files = listing(roots)
        error = ""
        try:
            rc = _stream(commands[1], env, progress, timeout)
            if rc != 0:
                error = f"install failed (exit {rc})" if rc > 0 else f"installer killed by signal {-rc}"
            else:
                progress("verifying in a fresh interpreter")
                problems = verify(python, plan, exact, ccs, verify_timeout)
                if problems:
                    error = "verification failed: " + "; ".join(problems)
        except KeyboardInterrupt:
            error = "interrupted"
        except InstallFailed as exc:
            error = str(exc)
        if error:
            progress(f"{error}; rolling back")
            problems = restore(before_files, roots, bdir)
            after = versions(describe_env(python))
            outcome.rollback_ok = after == before_versions and not problems
            outcome.after = after
            outcome.message = error + ("; the environment is as it was" if outcome.rollback_ok else
                                       "; ROLLBACK INCOMPLETE: " + "; ".join(problems[:5]))
            shutil.rmtree(bdir, ignore_errors=True)
            return outcome
        after = versions(describe_env(python))
        last = sdir / "backup"
        if last.exists():
            shutil.rmtree(last)
        bdir.rename(last)
        (sdir / "last_fix.json").write_text(json.dumps({
            "schema": "envdoctor.fix_state/1", "python": python, "prefix": desc["prefix"],
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "before": before_versions, "after": after,
            "packages": [p.to_json() for p in plan.packages], "backup": str(last),
        }, indent=1))
        outcome.status, outcome.after, outcome.rollback_ok = "installed", after, None
        outcome.message = "installed " + ", ".join(pins)
        return outcome
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, old_term)
        shutil.rmtree(wheelhouse, ignore_errors=True)


def undo(python: str, progress: Progress, state_root: Path) -> Outcome:
    desc = describe_env(python, files=True)
    sdir = state_dir(desc["prefix"], state_root)
    state_file = sdir / "last_fix.json"
    if not state_file.is_file():
        raise InputError(f"{python}: no fix to undo in this environment")
    try:
        state = json.loads(state_file.read_text())
        before = dict(state["before"])
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{state_file}: unreadable fix state: {exc}") from None
    bdir = Path(state["backup"])
    now = versions(desc)
    changed = sorted(n for n in set(now) | set(before) if now.get(n) != before.get(n))
    what = ", ".join(f"{n} {before.get(n, '(none)')}" for n in changed) or "nothing"
    progress(f"putting back: {what}")
    problems = undo_by_record(desc, before, bdir)
    after = versions(describe_env(python))
    ok = after == before and not problems
    out = Outcome("undone" if ok else "rolled_back", "", before=now, after=after, rollback_ok=ok)
    out.message = "the environment is as before the last fix" if ok else "undo incomplete: " + "; ".join(
        problems[:5] or [f"{n}: {after.get(n)} != {before.get(n)}" for n in changed if after.get(n) != before.get(n)])
    if ok:
        state_file.unlink()
        shutil.rmtree(bdir, ignore_errors=True)
    return out

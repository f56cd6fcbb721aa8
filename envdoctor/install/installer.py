"""Carry out a plan in a target interpreter, and put everything back when anything fails.

Steps: (1) describe the environment (every distribution, its files); (2) `pip download` the exact pins
into a wheelhouse: the torch index is added with --extra-index-url, everything else comes from the
user's own pip configuration (mirrors, certificates), and pip checks the index's hashes. A failure
here has changed nothing. (3) keep the files of every installed distribution the wheelhouse replaces
(hard links, copies across file systems) and list the install directories; (4) install from the
wheelhouse only (`pip install --no-index --find-links`, or `uv pip install --python`); a package built
on torch (DeepSpeed, an sdist) comes last, built without isolation against the torch in place, its own
dependencies from the user's index, every installed distribution held at its version by a constraints
file; (5) verify in a child of the target interpreter (DeepSpeed: `import deepspeed` and ds_report).
Any failure or interruption in (4)-(5): files that were not there are removed, files that were are put
back, and the distribution list must equal the one before.

Before (4) the environment's lock is held and a journal is fsync'd (envdoctor.install.state): a fix killed
in (4)-(5), even by SIGKILL, is found by the next `fix`, `undo` or `check`, and `undo` finishes its rollback.
A rollback is not stopped by Ctrl-C or SIGTERM. An index URL with credentials reaches pip through its
environment, never its argv, and is never printed or stored.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from envdoctor.bounded_read import read_text
from envdoctor.compat import parse_cc, serving_kernel, variant_cuda
from envdoctor.errors import InputError
from envdoctor.fix_journal import JOURNAL, LAST_FIX, LAST_FIX_CAP, Journal, describe, finished, journal_problem, state_dir
from envdoctor.install.backup import (
    backup,
    check_backup,
    files_to_remove,
    listing,
    restore,
    roots_of,
    undo_files,
)
from envdoctor.install.conda_env import conda_torch, overlaps
from envdoctor.install.conda_env import why as conda_why
from envdoctor.install.constraints import check as check_constraints
from envdoctor.install.download_progress import DownloadMeter, progress_bar_option
from envdoctor.install.indexes import index_options
from envdoctor.install.resolve import IndexUnreachable
from envdoctor.install.state import (
    BackupDamaged,
    EnvLock,
    InterruptedFix,
    ensure_private_dir,
    read_journal,
    remove_durably,
    uninterruptible,
    write_journal,
    write_private,
)
from envdoctor.install.uv_project import project_of, refusal
from envdoctor.lost_output import never_raises
from envdoctor.probes.children_run import CHILDREN
from envdoctor.processes import run_command, sigterm_as_interrupt
from envdoctor.redact import scrub_secrets
from envdoctor.versions import series
from envdoctor.wheels.planner import Plan
from envdoctor.wheels.release_files import file_name

Progress = Callable[[str], None]
CONSTRAINTS = "constraints.txt"
HELD = "held.txt"  # torch (and every planned pin) held at its version while pip resolves a plan's requirements


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


def built_on_torch(plan: Plan) -> List[str]:
    """The planned packages from the user's own index (DeepSpeed, an sdist): installed last, built against the
    torch in place, never with a torch of their own."""
    return [p.name for p in plan.packages if not p.index_url]


def build_commands(plan: Plan, python: str, wheelhouse: str, uv: Optional[str], pins: Optional[List[str]] = None,
                   has_pip: bool = True, repairs: Optional[List[str]] = None, pip_version: Optional[str] = None,
                   needs_setuptools: bool = False) -> List[List[str]]:
    """The exact argv lists `fix --yes` runs: downloads (pip), then installs from the wheelhouse only, and
    reinstall (`repairs`: pins of the version already installed, whose files are broken) without dependencies.
    A package built on torch (DeepSpeed) is downloaded alone and installed last without build isolation, with
    every installed distribution pinned by WHEELHOUSE/constraints.txt (see `constraints_text`), so that its
    own dependencies are added but nothing installed changes, torch least of all.
    An index URL with credentials is not in them: it goes to pip through `index_env`."""
    pins = pins or [p.pin for p in plan.packages]
    on_torch = set(built_on_torch(plan))
    built = [pin for pin in pins if canonicalize_name(pin.partition("==")[0]) in on_torch]
    wheels = [pin for pin in pins if pin not in built]
    built_repairs = [p for p in (repairs or []) if p in built]
    repairs = [p for p in (repairs or []) if p in wheels]
    extra, _env = index_options((p.index_url for p in plan.packages if p.index_url), {})
    bar = progress_bar_option(pip_version if has_pip else _own_pip_version())
    if has_pip:
        download = [python, "-m", "pip", "download", "--dest", wheelhouse, "--progress-bar", bar]
    else:  # a uv-made venv without pip: envdoctor's own pip downloads binary wheels for the target's Python
        download = [sys.executable, "-m", "pip", "download", "--dest", wheelhouse, "--progress-bar", bar,
                    "--python-version", plan.python.rstrip("t")]
    if uv:
        install = [uv, "pip", "install", "--python", python, "--no-index", "--find-links", wheelhouse]
        reinstall = ["--reinstall", "--no-deps"]
        on_top = [uv, "pip", "install", "--python", python, "--no-build-isolation", "--find-links", wheelhouse]
    else:
        install = [python, "-m", "pip", "install", "--no-index", "--find-links", wheelhouse, "--progress-bar", "off"]
        reinstall = ["--force-reinstall", "--no-deps"]
        on_top = [python, "-m", "pip", "install", "--no-build-isolation", "--find-links", wheelhouse,
                  "--progress-bar", "off"]
    requirements, rebuilds = list(plan.requirements), list(plan.rebuilds)
    held = ["--constraint", str(Path(wheelhouse) / HELD)] if requirements or rebuilds else []
    commands = []
    if wheels or requirements:
        commands.append(download + (["--only-binary=:all:"] if not has_pip else []) + held + extra + wheels + requirements)
    if built:
        commands.append(download + ["--no-deps"] + built + (["setuptools"] if needs_setuptools else []))
    changes = [p for p in wheels if p not in repairs] + (["setuptools"] if built and needs_setuptools else [])
    if changes or requirements:
        commands.append(install + held + changes + requirements)
    if repairs:
        commands.append(install + reinstall + repairs)
    constrained = on_top + ["--constraint", str(Path(wheelhouse) / CONSTRAINTS)]
    if [p for p in built if p not in built_repairs]:
        commands.append(constrained + [p for p in built if p not in built_repairs])
    if built_repairs:
        commands.append(constrained + reinstall + built_repairs)
    if plan.files:  # release wheels from outside the index, built for the torch in place: by their files, as they are
        commands.insert(len([c for c in commands if is_download(c)]),
                        download + (["--only-binary=:all:"] if not has_pip else []) + ["--no-deps", *plan.files])
        commands.append(install + reinstall + [str(Path(wheelhouse) / file_name(u)) for u in plan.files])
    if rebuilds:  # from the user's own index, compiled against the torch in place: last, and only with --unsafe
        if uv:
            rebuild = [uv, "pip", "install", "--python", python, "--no-build-isolation", "--no-cache", "--reinstall",
                       "--no-deps"]
        else:
            rebuild = [python, "-m", "pip", "install", "--no-build-isolation", "--no-cache-dir", "--force-reinstall",
                       "--no-deps", "--progress-bar", "off"]
        # from source even where the index has a wheel of that version: the wheel is the build that does not fit
        no_binary = [a for r in rebuilds for a in ("--no-binary", canonicalize_name(r.partition("==")[0]))]
        commands.append(rebuild + no_binary + held + rebuilds)
    return commands


def held_text(before: Mapping[str, str], pins: List[str]) -> str:
    """torch at the planned or installed version and every planned pin: what pip's resolver may not move while it
    installs a plan's requirements (sympy>=1.13.3 must not pull another torch)."""
    want = {"torch": before["torch"]} if before.get("torch") else {}
    for pin in pins:
        name, _, version = pin.partition("==")
        if "*" not in version:
            want[canonicalize_name(name)] = version
    return "".join(f"{name}=={version}\n" for name, version in sorted(want.items()) if version)


def is_download(argv: List[str]) -> bool:
    return argv[1:4] == ["-m", "pip", "download"]


def constraints_text(before: Mapping[str, str], pins: List[str]) -> str:
    """Every installed distribution at its version, the planned ones at their pins: what a package built on
    torch may add to, never change."""
    want = dict(before)
    for pin in pins:
        name, _, version = pin.partition("==")
        want[canonicalize_name(name)] = version
    return "".join(f"{name}=={version}\n" for name, version in sorted(want.items()) if version)


def _own_pip_version() -> Optional[str]:
    try:
        from importlib.metadata import version

        return version("pip")
    except Exception:
        return None


def index_env(plan: Plan, environ: Mapping[str, str]) -> Dict[str, str]:
    """The pip environment variables that carry the plan's indexes with credentials."""
    return index_options((p.index_url for p in plan.packages if p.index_url), environ)[1]


# --- running the tools --------------------------------------------------------------------------


def _stream(argv: List[str], env: Dict[str, str], progress: Progress, timeout: float,
            meter: Optional[DownloadMeter] = None) -> int:
    """Run argv, echo its output as progress (through `meter`: a download); its exit code (negative: killed by
    that signal).

    Raises InstallFailed when it cannot start or runs past `timeout`; KeyboardInterrupt passes through
    (the gateway has killed the command's whole tree by then)."""
    progress("$ " + " ".join(argv))

    def echo(line: str) -> None:
        text = scrub_secrets(line.rstrip())
        meter.line(text) if meter else progress("  " + text)

    res = run_command(argv, timeout, env=env, merge_stderr=True, on_line=echo, max_bytes=0)
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
            "packages": {p.name: exact[p.name] for p in plan.packages if p.name in exact and "*" not in exact[p.name]},
            "deepspeed": any(p.name == "deepspeed" for p in plan.packages)}
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _same_version(a: Optional[str], b: str) -> bool:
    try:
        return a is not None and Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def repairs_for(pins: List[str], installed: Mapping[str, str]) -> List[str]:
    """The pins of a version that is already installed: the plan found it broken, so its files are reinstalled."""
    out = []
    for pin in pins:
        name, _, version = pin.partition("==")
        if "*" not in version and _same_version(installed.get(canonicalize_name(name)), version):
            out.append(pin)
    return out


def _interrupted(journal: Journal, python: str) -> str:
    return (f"{python}: {describe(journal)} was interrupted and may have left the environment half-changed; "
            f"run `envdoctor undo --python {python}` to put it back")


def refuse_foreign_owner(desc: Dict[str, Any], plan: Plan) -> None:
    """InputError when another tool owns what the plan would change: a uv project's environment, or conda's
    torch in a conda environment. Nothing has changed by then."""
    project = project_of(desc["prefix"], os.getcwd(), os.environ)
    if project is not None:
        raise InputError(refusal(project, desc["prefix"]))
    conda = conda_torch(desc["prefix"])
    if conda is not None and overlaps(conda, plan):
        raise InputError(conda_why(conda, plan))


def open_state(desc: Dict[str, Any], python: str, state_root: Path) -> Tuple[Path, EnvLock, Optional[Dict[str, Any]]]:
    """Lock the environment's state (EnvBusy when another envdoctor holds it) and read the journal of an
    interrupted fix or undo (None: there is none). A journal of a fix that was recorded as done is dropped."""
    sdir = ensure_private_dir(state_dir(desc["prefix"], state_root))
    lock = EnvLock(sdir, python, prefix=desc["prefix"]).acquire()
    try:
        journal = read_journal(sdir)
        if journal is not None and finished(sdir, journal):
            remove_durably(sdir / JOURNAL)  # killed after the fix was recorded: it finished
            journal = None
    except BaseException:
        lock.release()
        raise
    return sdir, lock, journal


def _read_last_fix(sdir: Path) -> Optional[Dict[str, Any]]:
    try:
        doc = json.loads(read_text(sdir / LAST_FIX, cap=LAST_FIX_CAP))
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


def _drop_old_backups(sdir: Path, keep: List[str]) -> None:
    for d in sdir.glob("backup*"):
        if d.is_dir() and str(d) not in keep:
            shutil.rmtree(d, ignore_errors=True)


def execute(plan: Plan, python: str, ccs: List[str], progress: Progress, state_root: Path, use_uv: bool = True,
            break_system_packages: bool = False, timeout: float = 3600.0, verify_timeout: float = 300.0,
            live: Optional[Progress] = None, promised: Optional[Callable[[], List[str]]] = None) -> Outcome:
    """Install a plan in the target interpreter; on any failure put the environment back (status rolled_back).
    `state_root` holds the per-environment state (Settings.state_root); `use_uv` False means pip only; `live`
    (a terminal) gets a download's bytes, rate and ETA as they change.
    `promised`: after the install verified, what the plan promised and did not deliver (a finding that a fresh
    `check` still finds); anything there rolls everything back.
    Raises EnvBusy while another envdoctor changes the environment, InterruptedFix after one was killed."""
    progress = never_raises(progress)  # a closed output must not skip the rollback
    desc = describe_env(python, files=True)
    if desc["externally_managed"] and not break_system_packages:
        raise InputError(f"{python}: this environment is managed by the system (PEP 668); use a virtual environment, "
                         "or pass --break-system-packages")
    refuse_foreign_owner(desc, plan)
    sdir, lock, journal = open_state(desc, python, state_root)
    try:
        if journal is not None:
            raise InterruptedFix(_interrupted(journal, python))
        return _execute(plan, python, ccs, progress, sdir, desc, use_uv, timeout, verify_timeout, live, promised)
    finally:
        lock.release()


def _execute(plan: Plan, python: str, ccs: List[str], progress: Progress, sdir: Path, desc: Dict[str, Any],
             use_uv: bool, timeout: float, verify_timeout: float, live: Optional[Progress],
             promised: Optional[Callable[[], List[str]]] = None) -> Outcome:
    from envdoctor.install.resolve import resolve_versions

    before_versions = versions(desc)
    last = _read_last_fix(sdir)
    _drop_old_backups(sdir, [str(last.get("backup"))] if last else [])
    wheelhouse = sdir / "wheelhouse"
    try:
        if wheelhouse.exists():
            shutil.rmtree(wheelhouse)
        wheelhouse.mkdir(mode=0o700)
    except OSError as exc:
        raise InputError(f"{wheelhouse}: cannot make the download directory ({exc.strerror or exc}); "
                         "nothing was changed") from None

    # Exact versions, read from the variant index where it answers.
    exact = {p.name: p.version for p in plan.packages}
    # a companion planned as a series ('0.28.*') is read as its series too: its exact build is the index's to say
    wants = {p.name: (series(p.version.removesuffix(".*")) or p.version, p.variant) for p in plan.packages
             if p.variant and p.index_url}
    base = next((p.index_url.rsplit("/", 1)[0] for p in plan.packages if p.index_url), "")
    if wants and base:
        try:
            found, notes = resolve_versions(base, wants, plan.python or desc["python"], plan.platform)
        except IndexUnreachable as exc:
            shutil.rmtree(wheelhouse, ignore_errors=True)
            return Outcome("rolled_back", f"{exc}; nothing was changed", before=before_versions, rollback_ok=True)
        for n in notes:
            progress(scrub_secrets(n))
        for name, ver in found.items():
            exact[name] = ver
    pins = []
    for p in plan.packages:
        ver = exact[p.name]
        # A series the index could not resolve ("0.29.*") cannot carry a local label; pip picks within it.
        exact[p.name] = ver if "+" in ver or "*" in ver or not p.variant else f"{ver}+{p.variant}"
        pins.append(f"{p.name}=={exact[p.name]}")
    repairs = repairs_for(pins, before_versions)
    uv = find_uv(use_uv)
    if not desc["has_pip"] and not uv:
        raise InputError(f"{python}: neither pip in the environment nor uv on PATH")
    on_torch = built_on_torch(plan)
    commands = build_commands(plan, python, str(wheelhouse), uv, pins, has_pip=desc["has_pip"], repairs=repairs,
                              pip_version=before_versions.get("pip"),
                              needs_setuptools=bool(on_torch) and "setuptools" not in before_versions)
    env = dict(os.environ)
    env.update(plan.env)
    env.update(index_env(plan, os.environ))
    outcome = Outcome("rolled_back", "", commands, before=before_versions)
    conflict = check_constraints(pins, python if desc["has_pip"] else sys.executable, env)
    if conflict:
        shutil.rmtree(wheelhouse, ignore_errors=True)
        outcome.message, outcome.rollback_ok = f"{conflict}; nothing was changed", True
        return outcome
    if on_torch:
        write_private(wheelhouse / CONSTRAINTS, constraints_text(before_versions, pins))
    if plan.requirements or plan.rebuilds:
        write_private(wheelhouse / HELD, held_text(before_versions, pins))
    downloads = [c for c in commands if is_download(c)]

    # SIGTERM rolls back like Ctrl-C; signal handlers can only be set from the main thread (the TUI runs this in a worker).
    in_main = threading.current_thread() is threading.main_thread()
    old_term = signal.getsignal(signal.SIGTERM)
    if in_main:
        signal.signal(signal.SIGTERM, sigterm_as_interrupt)
    try:
        try:
            progress("downloading (nothing in the environment changes yet)")
            rc = 0
            for cmd in downloads:
                rc = _stream(cmd, env, progress, timeout, DownloadMeter(lambda line: progress("  " + line), live))
                if rc != 0:
                    break
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
        rebuilt = [canonicalize_name(r.partition("==")[0]) for r in plan.rebuilds]
        names = sorted(set(wheelhouse_names(wheelhouse)) | set(rebuilt))
        replaced = [n for n in names if n in before_versions]
        progress(f"keeping the files of {', '.join(replaced) or 'nothing'} for a rollback")
        fix_id = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"
        roots = roots_of(desc)
        bdir = sdir / f"backup-{fix_id}"
        record = Journal(op="fix", id=fix_id, pid=os.getpid(), python=python, prefix=desc["prefix"], started=_now(),
                         phase="installing", before=before_versions, backup=str(bdir), roots=[str(r) for r in roots],
                         packages=[p.to_json() for p in plan.packages])
        try:
            backup(desc, replaced, bdir)
            record = dataclasses.replace(record, before_files=listing(roots))
            write_journal(sdir, record)  # from here on an interruption of any kind can be rolled back
        except OSError as exc:  # a full disk, a read-only state directory: stop before the environment changes
            shutil.rmtree(bdir, ignore_errors=True)
            outcome.message = f"cannot keep a backup and a journal in {sdir} ({exc.strerror or exc}); nothing was changed"
            outcome.rollback_ok = True
            return outcome
        error = ""
        try:
            for cmd in commands[len(downloads):]:
                rc = _stream(cmd, env, progress, timeout)
                if rc != 0:
                    error = f"install failed (exit {rc})" if rc > 0 else f"installer killed by signal {-rc}"
                    break
            if not error:
                progress("verifying in a fresh interpreter")
                problems = verify(python, plan, exact, ccs, verify_timeout)
                if problems:
                    error = "verification failed: " + "; ".join(problems)
            if not error and promised is not None:
                progress("checking the environment again: each step's finding must be gone")
                try:
                    problems = promised()
                except Exception as exc:  # a check that cannot run proves nothing: roll back like a failed one
                    problems = [f"the fresh check did not run ({type(exc).__name__}: {exc})"]
                if problems:
                    error = "verification failed: " + "; ".join(problems)
        except KeyboardInterrupt:
            error = "interrupted"
        except InstallFailed as exc:
            error = str(exc)
        if not error:
            after = versions(describe_env(python))
            try:
                write_private(sdir / LAST_FIX, json.dumps({
                    "schema": "envdoctor.fix_state/1", "id": fix_id, "python": python, "prefix": desc["prefix"],
                    "time": _now(), "before": before_versions, "after": after,
                    "packages": [p.to_json() for p in plan.packages], "backup": str(bdir),
                }, indent=1))
            except OSError as exc:  # a full disk: a fix that cannot be recorded could not be undone
                error = f"cannot record the fix in {sdir} ({exc.strerror or exc})"
        if error:
            with uninterruptible(progress):  # before saying so: a Ctrl-C that follows the message is held
                progress(f"{error}; rolling back")
                ok, after, problems = roll_back(sdir, record, python, progress)
            outcome.rollback_ok, outcome.after = ok, after
            outcome.message = error + ("; the environment is as it was" if ok else
                                       "; ROLLBACK INCOMPLETE: " + "; ".join(problems[:5]) +
                                       f"; `envdoctor undo --python {python}` tries again")
            return outcome
        remove_durably(sdir / JOURNAL)
        _drop_old_backups(sdir, [str(bdir)])
        outcome.status, outcome.after, outcome.rollback_ok = "installed", after, None
        moved = sorted(n for n in after if after.get(n) != before_versions.get(n)
                       and not any(canonicalize_name(p.partition("==")[0]) == n for p in pins))
        extra = [f"{n} {after[n]}" for n in moved] if plan.requirements or plan.rebuilds else []
        files = [file_name(u) for u in plan.files]
        outcome.message = "installed " + ", ".join(pins + extra + files)
        outcome.message += f" (reinstalled {', '.join(repairs)})" if repairs else ""
        if plan.rebuilds:
            outcome.message += f" (rebuilt {', '.join(plan.rebuilds)})"
        return outcome
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, old_term)
        shutil.rmtree(wheelhouse, ignore_errors=True)


def roll_back(sdir: Path, record: Journal, python: str, progress: Progress) -> Tuple[bool, Dict[str, str], List[str]]:
    """Put the environment back to the journal's listing; Ctrl-C and SIGTERM wait for it. (ok, versions, problems).
    The journal and the backup are dropped only when it worked, so `undo` can try again."""
    with uninterruptible(progress):
        try:
            write_journal(sdir, dataclasses.replace(record, phase="rolling_back"))
        except OSError:
            pass  # the journal from before the install says the same; the rollback must not wait on it
        bdir = Path(str(record.backup))
        problems = restore(dict(record.before_files or {}), [Path(r) for r in record.roots or []], bdir)
        after = versions(describe_env(python))
        ok = after == record.before and not problems
        if not problems and not ok:
            problems = [f"{n}: {after.get(n)} != {record.before.get(n)}"
                        for n in sorted(set(after) | set(record.before)) if after.get(n) != record.before.get(n)]
        if ok:
            remove_durably(sdir / JOURNAL)
            shutil.rmtree(bdir, ignore_errors=True)
    return ok, after, problems


def _may_touch(desc: Dict[str, Any]) -> Callable[[str], bool]:
    """Whether a rollback or an undo may write or remove this path: under the environment's prefix or install
    directories, or a file of one of its distributions (a user site's too). A damaged or planted journal or
    backup manifest naming anything else is refused."""
    inside = tuple(os.path.realpath(d).rstrip(os.sep) + os.sep for d in [*roots_of(desc), desc["prefix"]])
    known = {f for d in desc["dists"] for f in d.get("files") or []}
    return lambda path: path in known or resolved(path).startswith(inside)


def resolved(path: str) -> str:
    """`path` with its directory resolved (`..`, symbolic links), its last part kept: a rollback removes or writes
    that entry itself. "" for what names no file (relative, NUL, a last part of `..`)."""
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        return ""
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return ""
    return os.path.join(os.path.realpath(head), tail)


def _check_backup_or_stop(bdir: Path, python: str, desc: Dict[str, Any]) -> Dict[str, Any]:
    manifest, problems = check_backup(bdir)
    if manifest is not None and not problems:
        may_touch = _may_touch(desc)
        problems = [f"{e['path']} is outside the environment" for e in manifest["files"] if not may_touch(e["path"])]
    if manifest is None or problems:
        raise BackupDamaged(f"{python}: the backup in {bdir} is damaged ({'; '.join(problems[:3])}); "
                            "nothing was changed")
    return manifest


def undo(python: str, progress: Progress, state_root: Path) -> Outcome:
    """Revert the last fix, or finish the rollback of an interrupted one. The backup is checked before anything
    changes (BackupDamaged: nothing was changed)."""
    progress = never_raises(progress)
    desc = describe_env(python, files=True)
    sdir, lock, journal = open_state(desc, python, state_root)
    try:
        if journal is not None:
            return _resume(journal, sdir, desc, python, progress)
        return _undo_last(sdir, desc, python, progress)
    finally:
        lock.release()


def _resume(journal: Journal, sdir: Path, desc: Dict[str, Any], python: str, progress: Progress) -> Outcome:
    problem = journal_problem(journal, [str(r) for r in roots_of(desc)], _may_touch(desc))
    if problem:
        raise BackupDamaged(f"{python}: the journal {sdir / JOURNAL} is damaged ({problem}); nothing was changed")
    bdir = Path(str(journal.backup))
    manifest = _check_backup_or_stop(bdir, python, desc)
    before = dict(journal.before)
    now = versions(desc)
    progress(f"{_interrupted(journal, python).split(';')[0]}; putting the environment back")
    if journal.op == "undo":
        with uninterruptible(progress):
            problems = undo_files(list(journal.remove or []), manifest, bdir)
            after = versions(describe_env(python))
            ok = after == before and not problems
            if ok:
                _finish_undo(sdir, bdir)
    else:
        ok, after, problems = roll_back(sdir, journal, python, progress)
    out = Outcome("undone" if ok else "rolled_back", "", before=now, after=after, rollback_ok=ok)
    out.message = ("the interrupted change was rolled back: the environment is as before it" if ok else
                   "rollback incomplete: " + "; ".join(problems[:5]))
    return out


def _finish_undo(sdir: Path, bdir: Path) -> None:
    remove_durably(sdir / LAST_FIX)
    remove_durably(sdir / JOURNAL)
    shutil.rmtree(bdir, ignore_errors=True)


def _undo_last(sdir: Path, desc: Dict[str, Any], python: str, progress: Progress) -> Outcome:
    state_file = sdir / LAST_FIX
    if not state_file.is_file():
        raise InputError(f"{python}: no fix to undo in this environment")
    try:
        state = json.loads(read_text(state_file, cap=LAST_FIX_CAP))
        before = dict(state["before"])
        backup = state["backup"]
        if not isinstance(backup, str) or not os.path.isabs(backup) or "\0" in backup:
            raise ValueError("its backup is not the path of a directory")
        bdir = Path(backup)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{state_file}: unreadable fix state: {getattr(exc, 'strerror', None) or exc}") from None
    manifest = _check_backup_or_stop(bdir, python, desc)
    now = versions(desc)
    changed = sorted(n for n in set(now) | set(before) if now.get(n) != before.get(n))
    what = ", ".join(f"{n} {before.get(n, '(none)')}" for n in changed) or "nothing"
    progress(f"putting back: {what}")
    remove = files_to_remove(desc, before)
    try:
        write_journal(sdir, Journal(op="undo", id=state.get("id"), pid=os.getpid(), python=python,
                                    prefix=desc["prefix"], started=_now(), before=before, backup=str(bdir),
                                    remove=remove))
    except OSError as exc:
        raise InputError(f"{sdir}: cannot write the journal ({exc.strerror or exc}); nothing was changed") from None
    with uninterruptible(progress):
        problems = undo_files(remove, manifest, bdir)
        after = versions(describe_env(python))
        ok = after == before and not problems
        if ok:
            _finish_undo(sdir, bdir)
    out = Outcome("undone" if ok else "rolled_back", "", before=now, after=after, rollback_ok=ok)
    out.message = "the environment is as before the last fix" if ok else "undo incomplete: " + "; ".join(
        problems[:5] or [f"{n}: {after.get(n)} != {before.get(n)}" for n in changed if after.get(n) != before.get(n)])
    return out

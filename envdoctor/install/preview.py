"""What `fix --yes` would do for a plan, filled in before anything runs (dry run, the TUI): the exact commands,
and everything pip would install."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.utils import canonicalize_name

from envdoctor.fix_journal import state_dir
from envdoctor.install.conda_env import conda_torch, overlaps, switch_command
from envdoctor.install.conda_env import why as conda_why
from envdoctor.install.constraints import check as check_constraints
from envdoctor.install.indexes import index_options
from envdoctor.install.installer import build_commands, built_on_torch, describe_env, find_uv, repairs_for, versions
from envdoctor.install.resolve import first_unreachable
from envdoctor.install.uv_project import project_commands, project_of, refusal
from envdoctor.processes import run_command
from envdoctor.redact import scrub_secrets
from envdoctor.snapshot import Snapshot
from envdoctor.wheels.planner import Plan


def attach_commands(plan: Plan, snapshot: Snapshot, python_path: Optional[str], state_root: Path,
                    use_uv: bool = True, environ: Optional[Mapping[str, str]] = None) -> None:
    """Set `plan.commands`: for the interpreter at `python_path`, or (a snapshot from elsewhere, python_path None)
    with the snapshot's interpreter and a WHEELHOUSE placeholder. The environment of a uv project gets the
    project's commands, a conda environment with conda's torch the switch to pip's first (and a note why)."""
    if not (plan.packages or plan.requirements or plan.rebuilds or plan.files):
        return
    if python_path:
        desc = describe_env(python_path)
        project = project_of(desc["prefix"], os.getcwd(), os.environ if environ is None else environ)
        if project is not None:
            plan.commands = project_commands(plan, project)
            plan.notes.append(refusal(project, desc["prefix"]))
            return
        wheelhouse = str(state_dir(desc["prefix"], state_root) / "wheelhouse")
        pins = [p.pin for p in plan.packages]
        installed = versions(desc)
        plan.commands = build_commands(plan, python_path, wheelhouse, find_uv(use_uv), pins, has_pip=desc["has_pip"],
                                       repairs=repairs_for(pins, installed), pip_version=installed.get("pip"),
                                       needs_setuptools=bool(built_on_torch(plan)) and "setuptools" not in installed)
        conda = conda_torch(desc["prefix"])
        if conda is not None and overlaps(conda, plan):
            plan.commands.insert(0, switch_command(conda))
            plan.notes.append(conda_why(conda, plan))
    else:
        exe = getattr(snapshot.python, "executable", None)
        plan.commands = build_commands(plan, exe if isinstance(exe, str) and exe else "python", "WHEELHOUSE", None)


def unreachable_index(plan: Plan) -> Optional[str]:
    """The one line saying the PyTorch index of the plan's packages does not answer (resolve.unreachable_message);
    None: it answered, or the plan reads no PyTorch index."""
    return first_unreachable(f"{u}/{p.name}" for p in plan.packages for u in [p.index_url] if u)


def install_report(plan: Plan, python_path: str, environ: Mapping[str, str], pip_index: Optional[str],
                   timeout: float = 300.0) -> Tuple[List[Dict[str, Any]], List[str]]:
    """Everything `fix --yes` would install for the plan, dependencies included, as pip resolves it against the
    indexes (`pip install --dry-run --report -`): [{name, version, url, hashed, requested}] and notes (links
    without a hash; why the list is missing). `pip_index`: the user's pip index (None: PyPI). `hashed` is
    whether the index page's link carries a hash (pip's report hashes every file it fetched, so it cannot
    tell); None when no index page showed the file. Credentials in URLs are never shown."""
    pins = [p.pin for p in plan.packages]
    files, file_notes = release_file_entries(plan.files)
    if not pins and not plan.requirements:
        return files, file_notes
    installs, notes = _resolved(plan, pins, python_path, environ, pip_index, timeout)
    return installs + files, notes + file_notes


def release_file_entries(urls: List[str]) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The release wheels a plan installs by their files (no resolution: --no-deps), as install_report lists them,
    each with its note: no index page gives their hash."""
    from envdoctor.wheels.release_files import name_and_version

    entries, notes = [], []
    for url in urls:
        name, version = name_and_version(url)
        entry = {"name": str(name), "version": str(version), "url": scrub_secrets(url), "hashed": False,
                 "requested": True, "release_file": True}
        entries.append(entry)
        notes.append(f"{name} {version}: a release file from outside the package index ({entry['url']}); its "
                     "host publishes no hash, so pip cannot check the download against one")
    return entries, notes


def _resolved(plan: Plan, pins: List[str], python_path: str, environ: Mapping[str, str], pip_index: Optional[str],
              timeout: float) -> Tuple[List[Dict[str, Any]], List[str]]:
    if plan.requirements:  # resolved with torch held, as the install does
        import tempfile

        from envdoctor.install.installer import held_text

        with tempfile.TemporaryDirectory(prefix="envdoctor-held-") as d:
            held = Path(d) / "held.txt"
            held.write_text(held_text(versions(describe_env(python_path)), pins), encoding="utf-8")
            return _install_report(plan, pins, ["--constraint", str(held), *plan.requirements], python_path, environ,
                                   pip_index, timeout)
    return _install_report(plan, pins, [], python_path, environ, pip_index, timeout)


def _install_report(plan: Plan, pins: List[str], more: List[str], python_path: str, environ: Mapping[str, str],
                    pip_index: Optional[str], timeout: float) -> Tuple[List[Dict[str, Any]], List[str]]:
    torch_indexes = [p.index_url for p in plan.packages if p.index_url]
    env_with_plan = {**environ, **plan.env}
    stop = unreachable_index(plan) or check_constraints(pins, python_path, env_with_plan)
    if stop:
        return [], [stop]
    extra, index_vars = index_options(torch_indexes, environ)
    argv = [python_path, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", "--progress-bar", "off",
            "--disable-pip-version-check", *extra, *pins, *more]
    env = {**environ, **plan.env, **index_vars}
    res = run_command(argv, timeout, env=env)
    try:
        report = json.loads(res.stdout) if res.ok else None
        items = report["install"] if isinstance(report, dict) else None
        if not isinstance(items, list):
            raise ValueError("no install list")
    except (ValueError, KeyError, TypeError):
        why = res.describe() if not res.ok else "it printed no install report (pip 22.2 or newer has --report)"
        return [], [scrub_secrets(f"could not list what pip would install with the dependencies: {why}")]
    indexes = [*dict.fromkeys(torch_indexes), pip_index or "https://pypi.org/simple",
               *environ.get("PIP_EXTRA_INDEX_URL", "").split()]
    pages: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
    installs: List[Dict[str, Any]] = []
    notes: List[str] = []
    for item in items:
        meta = item.get("metadata") or {}
        url = str((item.get("download_info") or {}).get("url", ""))
        name = canonicalize_name(str(meta.get("name", "?")))
        entry = {"name": name, "version": str(meta.get("version", "?")), "url": scrub_secrets(url),
                 "hashed": _link_hashed(url, name, indexes, pages), "requested": bool(item.get("requested"))}
        if entry["hashed"]:  # pip checked the index's hash: its report carries it
            entry["hashes"] = dict(((item.get("download_info") or {}).get("archive_info") or {}).get("hashes") or {})
        installs.append(entry)
        if entry["hashed"] is False:
            notes.append(f"{name} {entry['version']}: its index link has no hash ({entry['url']}); "
                         "pip cannot check the download against the index")
    return installs, notes


def _link_hashed(url: str, name: str, indexes: List[str], pages: Dict[Tuple[str, str], List[Tuple[str, str]]]) -> Optional[bool]:
    """Whether the first index page that lists this file gives a hash with its link (PEP 503 `#sha256=...`)."""
    from envdoctor.install.resolve import fetch_page
    from envdoctor.wheels.remote import page_files

    filename = urllib.parse.unquote(url.split("#", 1)[0].rsplit("/", 1)[-1])
    for index in indexes:
        key = (index.rstrip("/"), name)
        if key not in pages:
            try:
                pages[key] = page_files(fetch_page(f"{key[0]}/{name}", timeout=30))
            except OSError:
                pages[key] = []
        for fname, href in pages[key]:
            if fname == filename:
                fragment = href.partition("#")[2]
                return bool(re.match(r"(sha256|sha384|sha512|sha224|sha1|md5)=[0-9a-fA-F]+", fragment))
    return None


def extension_release(python: str, name: str, held: List[str], environ: Mapping[str, str],
                      torch_indexes: Sequence[str] = (), timeout: float = 300.0) -> Tuple[Optional[str], str]:
    """(version, '') of the `name` release pip's resolver picks from the user's own index as a binary wheel with
    torch held at the version in place (`held`: planned pins that replace it), or (None, why) when there is none:
    xformers pins torch in its metadata, so only the release built for this torch resolves."""
    import tempfile

    desc = describe_env(python)
    installed = versions(desc)
    pins = {"torch": f"torch=={installed['torch']}"} if installed.get("torch") else {}
    pins.update({canonicalize_name(p.partition("==")[0]): p for p in held})
    with tempfile.TemporaryDirectory(prefix="envdoctor-held-") as d:
        held_file = Path(d) / "held.txt"
        held_file.write_text("".join(f"{p}\n" for p in pins.values()), encoding="utf-8")
        extra, index_vars = index_options(torch_indexes, environ)  # a planned torch comes from its own index
        argv = [python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", "--progress-bar", "off",
                "--disable-pip-version-check", "--upgrade", "--only-binary", name, "--constraint", str(held_file),
                *extra, name]
        res = run_command(argv, timeout, env={**environ, **index_vars})
    try:
        report = json.loads(res.stdout) if res.ok else None
        items = report["install"] if isinstance(report, dict) else None
    except (ValueError, KeyError, TypeError):
        items = None
    if items is None:
        last = (res.stderr.strip().splitlines() or [res.describe()])[-1] if not res.ok else "no install report"
        return None, scrub_secrets(f"no {name} wheel for the torch in place on the package index ({last[:200]})")
    for item in items:
        meta = item.get("metadata") or {}
        if canonicalize_name(str(meta.get("name", ""))) == canonicalize_name(name):
            return str(meta.get("version")), ""
    return None, f"the package index has no other {name} release for the torch in place"

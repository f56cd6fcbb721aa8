"""`envdoctor index update`: refresh the wheel index from the PyTorch index and the pip-configured package index.

The bundled index (from the fact base) is the start; what the live indexes list is added to a user copy
(newest patch of each release and variant, which variants really have wheels, new DeepSpeed releases).
The copy is validated before it is written; the loader prefers it while it is valid and current.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import InvalidVersion, Version


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="the wheel index: refresh it from the live package indexes")
    s = p.add_subparsers(dest="index_command", metavar="ACTION")
    u = s.add_parser("update", help="refresh the user copy of the wheel index")
    u.add_argument("--index-base", metavar="URL",
                   help="PyTorch wheel index or mirror (default: ENVDOCTOR_TORCH_INDEX or the official)")
    u.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS", help="per request (default 20)")
    u.set_defaults(func=run_update)
    sh = s.add_parser("show", help="where the wheel index in use comes from")
    sh.set_defaults(func=run_show)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def pip_index_url(python: str = sys.executable) -> Optional[str]:
    """The index pip is configured with: PIP_INDEX_URL, else `pip config list`; None = pip's own default."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    from envdoctor.probes.base import run_command

    res = run_command([python, "-m", "pip", "config", "list"], timeout=30)
    for line in res.stdout.splitlines() if res.ok else []:
        m = re.match(r"^[\w:.-]*index-url='([^']+)'", line.strip())
        if m and ".extra-index-url" not in line:
            return m.group(1).split()[0]
    return None


def _simple_versions(url: str, package: str, timeout: float) -> List[str]:
    from envdoctor.install.resolve import fetch_page

    page = fetch_page(f"{url.rstrip('/')}/{package}", timeout)
    vers = set()
    for name in re.findall(r">\s*([^<>\s]+)\s*</a>", page):
        m = re.match(rf"^{package}-(\d[^-]*?)(-py3|-cp\d|\.tar\.gz|\.zip|-)", name, re.I)
        if m:
            vers.add(m.group(1))
    return sorted(vers, key=_vkey)


def _vkey(v: str) -> Tuple[int, Any]:
    try:
        return (1, Version(v))
    except InvalidVersion:
        return (0, v)


def refresh(raw: Dict[str, Any], base: str, pip_url: Optional[str], timeout: float,
            say: Any) -> Tuple[Dict[str, Any], List[str], int]:
    """A new index document from the bundled one plus what the live indexes list; what could not be read;
    how many torch index pages were read."""
    from envdoctor.install.resolve import fetch_page, wheel_files

    out = copy.deepcopy(raw)
    out["based_on"] = raw["generated"]
    failures: List[str] = []
    variants = sorted({v for rel in raw["torch"] for v, var in rel["variants"].items() if var["kind"] in ("cuda", "cpu")})
    seen: Dict[str, Dict[str, List[str]]] = {}  # variant -> release -> patch versions
    pages = 0
    for variant in variants:
        url = f"{base}/{variant}/torch"
        try:
            page = fetch_page(url, timeout)
        except OSError as exc:
            failures.append(f"{url}/: {exc}")
            continue
        for fname, _href in wheel_files(page):
            m = re.match(r"^torch-(\d+)\.(\d+)\.(\d+)\+" + re.escape(variant) + "-", fname)
            if m:
                seen.setdefault(variant, {}).setdefault(f"{m.group(1)}.{m.group(2)}", []).append(
                    f"{m.group(1)}.{m.group(2)}.{m.group(3)}")
        pages += 1
        say(f"read {url}/")
    for rel in out["torch"]:
        patches = [p for v in rel["variants"] for p in seen.get(v, {}).get(rel["version"], [])]
        if patches:
            newest = max(patches, key=Version)
            if Version(newest) > Version(rel["latest_patch"]):
                rel["latest_patch"], rel["patch_status"] = newest, "verified"
            elif newest == rel["latest_patch"]:
                rel["patch_status"] = "verified"
    if pip_url:
        try:
            ds = _simple_versions(pip_url, "deepspeed", timeout)
            say(f"read {pip_url.rstrip('/')}/deepspeed/")
        except OSError as exc:
            failures.append(f"{pip_url}: {exc}")
            ds = []
        known = {r["version"] for r in out["deepspeed"]["releases"]}
        newest_known = max(out["deepspeed"]["releases"], key=lambda r: Version(r["version"]))
        for v in ds:
            try:
                if Version(v) > Version(newest_known["version"]) and v not in known and not Version(v).is_prerelease:
                    entry = dict(newest_known, version=v, status="UNVERIFIED", date=None)
                    entry["note"] = ("seen on the package index; torch requirement and CUDA table assumed "
                                     "as the newest known release")
                    out["deepspeed"]["releases"].insert(0, entry)
            except InvalidVersion:
                continue
    else:
        failures.append("no package index configured for pip (PIP_INDEX_URL / pip config); DeepSpeed releases not refreshed")
    return out, failures, pages


def run_update(args: argparse.Namespace) -> int:
    from envdoctor.commands.fix import TORCH_INDEX_ENV
    from envdoctor.install.resolve import check_index_url
    from envdoctor.wheels.index import bundled_path, parse_index, read_index, user_copy_path

    def say(msg: str) -> None:
        print(f"envdoctor: {msg}", file=sys.stderr, flush=True)

    bundled = read_index(bundled_path())
    base = check_index_url(args.index_base or os.environ.get(TORCH_INDEX_ENV) or bundled.default_index_base, "--index-base")
    pip_url = pip_index_url()
    if pip_url:
        check_index_url(pip_url, "pip's index-url")
    new, failures, pages = refresh(bundled.raw, base, pip_url, args.timeout, say)
    for f in failures[:5]:
        say(f"could not refresh: {f}")
    if len(failures) > 5:
        say(f"... and {len(failures) - 5} more")
    if pages == 0:
        say(f"offline or unreachable ({base}): nothing refreshed; envdoctor keeps using {bundled.path}")
        return 1
    parse_index(new, "<refreshed index>")  # raises InputError listing every problem
    dest = user_copy_path()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_text(json.dumps(new, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, dest)
    sys.stdout.write(f"wrote {dest}\n")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from envdoctor.wheels.index import load_index

    idx = load_index(warn=lambda m: print(f"envdoctor: {m}", file=sys.stderr))
    sys.stdout.write(f"{idx.path} (generated {idx.generated}; {len(idx.releases)} torch releases, "
                     f"{len(idx.deepspeed)} DeepSpeed releases)\n")
    return 0


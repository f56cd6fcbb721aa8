"""The files a fix replaces, kept for a rollback or an undo, and putting them back.

A backup is `DIR/files/<absolute path>` (hard links where the file system allows, copies elsewhere) plus
`DIR/manifest.json`: every kept file with its SHA-256 (or its link target), so a backup is checked before
anything in the environment is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from envdoctor.bounded_read import open_regular, read_text
from envdoctor.install.state import write_private

MANIFEST_CAP = 64 * 1024 * 1024  # a path and a hash for each file of the distributions a fix replaced

Listing = Dict[str, Tuple[int, int]]


def roots_of(desc: Dict[str, Any]) -> List[Path]:
    roots = {desc["paths"].get(k) for k in ("purelib", "platlib", "scripts")}
    return sorted(Path(r) for r in roots if r and os.path.isdir(r))


def listing(roots: List[Path]) -> Listing:
    """path -> (size, mtime_ns) of every file under the install directories."""
    out: Listing = {}
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


def kept_path(bdir: Path, path: str) -> Path:
    return bdir / "files" / path.lstrip(os.sep).replace(":", "")


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with os.fdopen(open_regular(path), "rb") as fh:  # a FIFO planted among the kept files: refused, not waited on
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _keep(src: str, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)  # pip and uv unlink before writing, so a hard link keeps the old content
    except OSError:
        shutil.copy2(src, dst)


def _put(src: Path, dst: str) -> None:
    if os.path.lexists(dst):
        os.unlink(dst)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def backup(desc: Dict[str, Any], names: List[str], dest: Path) -> Dict[str, Any]:
    """Keep every file of these installed distributions under dest/files/<absolute path>."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "files").mkdir(parents=True, mode=0o700)
    kept: List[Dict[str, Optional[str]]] = []
    for d in desc["dists"]:
        if d["name"] not in names:
            continue
        for f in d.get("files") or []:
            if os.path.lexists(f) and not os.path.isdir(f):
                _keep(f, kept_path(dest, f))
                link = os.readlink(f) if os.path.islink(f) else None
                kept.append({"path": f, "link": link, "sha256": None if link is not None else _sha256(f)})
    manifest = {"dists": {d["name"]: d["version"] for d in desc["dists"] if d["name"] in names}, "files": kept}
    write_private(dest / "manifest.json", json.dumps(manifest))
    return manifest


def check_backup(bdir: Path) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """(manifest, problems): every kept file present, with the content it was kept with. Touches nothing."""
    try:
        manifest = json.loads(read_text(bdir / "manifest.json", cap=MANIFEST_CAP))
        entries = manifest["files"]
        if not isinstance(entries, list):
            raise ValueError("no file list")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, [f"{bdir}: no readable manifest ({exc})"]
    problems: List[str] = []
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("path"), str):
            problems.append(f"{bdir}: a manifest entry is not a file record")
            continue
        if not os.path.isabs(e["path"]) or "\0" in e["path"]:
            problems.append(f"{bdir}: a manifest entry names no file ({e['path']!r})")
            continue
        src = kept_path(bdir, e["path"])
        try:
            if e.get("link") is not None:
                if os.readlink(src) != e["link"]:
                    problems.append(f"{e['path']}: the kept link changed")
            elif _sha256(str(src)) != e.get("sha256"):
                problems.append(f"{e['path']}: the kept copy changed")
        except OSError as exc:
            problems.append(f"{e['path']}: the kept copy is missing ({exc.strerror or exc})")
        if len(problems) >= 20:
            break
    return manifest, problems


def restore(before: Listing, roots: List[Path], bdir: Path) -> List[str]:
    """Remove what was added under the roots, put back what was changed or removed; return what could not be.
    Running it again after an interruption continues where it stopped."""
    now = listing(roots)
    problems: List[str] = []
    for p in sorted(set(now) - set(before), reverse=True):
        try:
            os.unlink(p)
        except OSError as exc:
            problems.append(f"cannot remove {p}: {exc}")
    for p, stat in before.items():
        cur = now.get(p)
        if cur is not None and tuple(cur) == tuple(stat):
            continue
        src = kept_path(bdir, p)
        if not os.path.lexists(src):
            if p.endswith(".pyc"):
                continue  # byte code is rebuilt on import
            problems.append(f"no backup of {p}")
            continue
        try:
            _put(src, p)
        except OSError as exc:
            problems.append(f"cannot put back {p}: {exc}")
    _prune_dirs(roots, before)
    return problems


def _prune_dirs(roots: List[Path], before: Listing) -> None:
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


def files_to_remove(desc_now: Dict[str, Any], before: Dict[str, str]) -> List[str]:
    """The files of every distribution a finished fix added or changed, and their byte code."""
    out: List[str] = []
    for d in desc_now["dists"]:
        if before.get(d["name"]) == d["version"]:
            continue
        for f in d.get("files") or []:
            if not os.path.isdir(f):
                out.append(f)
            if f.endswith(".py"):
                cache = Path(f).parent / "__pycache__"
                out.extend(str(pyc) for pyc in (cache.glob(Path(f).stem + ".*.pyc") if cache.is_dir() else []))
    return out


def undo_files(remove: List[str], manifest: Dict[str, Any], bdir: Path) -> List[str]:
    """Remove `remove`, put back every kept file; idempotent, so an interrupted undo can run again."""
    problems: List[str] = []
    for f in remove:
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"cannot remove {f}: {exc}")
    for e in manifest["files"]:
        try:
            _put(kept_path(bdir, e["path"]), e["path"])
        except OSError as exc:
            problems.append(f"cannot put back {e['path']}: {exc}")
    return problems

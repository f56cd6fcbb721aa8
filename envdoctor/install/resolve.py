"""Exact versions from a PEP 503 index page (`<base>/<variant>/<package>/`), and URL checks."""

from __future__ import annotations

import html
import re
import urllib.parse
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from packaging.version import InvalidVersion, Version

from envdoctor.errors import InputError

_HREF = re.compile(r"""<a\s[^>]*href\s*=\s*["']([^"']+)["'][^>]*>""", re.I)
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<ver>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
PLATFORM_HINTS = {"linux_x86_64": ("x86_64",), "linux_aarch64": ("aarch64",), "win_amd64": ("win_amd64",)}


def check_index_url(url: str, what: str = "--index-base") -> str:
    """http(s) URLs with a host (and file:// for a mirror on local disk); anything else is bad input (exit 2)."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise InputError(f"{what} {url!r}: a URL cannot contain spaces or control characters")
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise InputError(f"{what} {url!r}: only http://, https:// or file:// index URLs are allowed")
    if scheme != "file" and not parts.hostname:
        raise InputError(f"{what} {url!r}: no host name")
    if scheme == "file" and not parts.path.strip("/"):
        raise InputError(f"{what} {url!r}: no path")
    return url.rstrip("/")


def fetch_page(url: str, timeout: float = 30.0) -> str:
    """The text of an index page; raises OSError (offline, 404, ...)."""
    if url.startswith("file://"):
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        return (path / "index.html").read_text(encoding="utf-8") if path.is_dir() else path.read_text(encoding="utf-8")
    import requests

    try:
        resp = requests.get(url + "/", timeout=timeout, headers={"Accept": "text/html"})
    except requests.RequestException as exc:
        raise OSError(str(exc)) from None
    if resp.status_code != 200:
        raise OSError(f"HTTP {resp.status_code} for {url}/")
    return resp.text


def wheel_files(page: str) -> List[Tuple[str, str]]:
    """(filename, href) of every wheel link on a PEP 503 page."""
    out = []
    for href in _HREF.findall(page):
        href = html.unescape(href)
        name = urllib.parse.unquote(href.split("#", 1)[0].rsplit("/", 1)[-1])
        if name.endswith(".whl"):
            out.append((name, href))
    return out


def _py_fits(tag: str, python: str) -> bool:
    major, minor = python.rstrip("t").split(".")
    return any(t in (f"cp{major}{minor}", f"py{major}", f"py{major}{minor}") for t in tag.split("."))


def newest_version(page: str, package: str, series: str, local: Optional[str], python: str,
                   platform: Optional[str]) -> Optional[str]:
    """The newest `package` version in `series` (e.g. '2.9') with local label `local` and a wheel for the target."""
    best: Optional[Version] = None
    hints = PLATFORM_HINTS.get(platform or "", ())
    for fname, _href in wheel_files(page):
        m = _WHEEL.match(fname)
        if not m or m.group("name").lower().replace("_", "-") != package:
            continue
        try:
            v = Version(m.group("ver"))
        except InvalidVersion:
            continue
        if (v.local or None) != (local or None) or not v.base_version.startswith(series + "."):
            continue
        if not _py_fits(m.group("py"), python):
            continue
        plat = m.group("plat")
        if plat != "any" and hints and not any(h in plat for h in hints):
            continue
        if best is None or v > best:
            best = v
    return str(best) if best is not None else None


def resolve_versions(base: str, wants: Dict[str, Tuple[str, str]], python: str, platform: Optional[str],
                     timeout: float = 30.0) -> Tuple[Dict[str, str], List[str]]:
    """{package: exact version} for each {package: (series, variant)}, and notes on what could not be read."""
    found: Dict[str, str] = {}
    notes: List[str] = []
    for pkg, (series, variant) in wants.items():
        url = f"{base}/{variant}/{pkg}"
        try:
            page = fetch_page(url, timeout)
        except OSError as exc:
            notes.append(f"could not read {url}/ ({exc}); using the wheel index's version")
            continue
        v = newest_version(page, pkg, series, variant, python, platform)
        if v is None:
            notes.append(f"no {pkg} {series}.*+{variant} wheel for Python {python} on {url}/; using the wheel index's version")
            continue
        found[pkg] = v
    return found, notes

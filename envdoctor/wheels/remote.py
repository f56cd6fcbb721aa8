"""What the live package indexes list, and the wheel index refreshed from it (`envdoctor index update`).

The bundled index (from the fact base) is the start; what the live indexes list is added to it: the
newest patch of each release and variant, a new minor release and a new variant of a known release (what a
listing cannot say, a variant's arch list and pins, is assumed from the previous release and marked so:
`envdoctor.wheels.learn`), and DeepSpeed releases newer than any known. File names
are read with `packaging.utils` (names canonicalized, versions parsed, any tags, free-threaded `cp313t`
included). `refresh` does not touch the network: pages come through a `fetch(url) -> text` the caller passes in;
`BoundedFetch` is the one `index update` passes: every page within one overall deadline and under a size cap,
so a stalled server or a flooding one ends the update with a clear error instead of a hang or a full disk.
"""

from __future__ import annotations

import copy
import os
import re
import threading
import time
import urllib.parse
from html.parser import HTMLParser
from typing import Any, Callable, Dict, List, Optional, Tuple

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from envdoctor.bounded_read import open_regular
from envdoctor.errors import InputError

Fetch = Callable[[str], str]  # a page's text; raises OSError when it cannot be read
MAX_PAGE_BYTES = 32 << 20  # PyTorch's largest index page is a few MB
DEFAULT_DEADLINE = 120.0
_CHUNK = 1 << 16


class IndexUnreachable(OSError):
    """No answer at all from the index's host (refused, no such host, timed out); an HTTP error is an answer."""


_ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")]+|Name or service not known|timed out|Connection refused")


def _short_reason(exc: Exception) -> str:
    m = _ERRNO.search(str(exc))
    return m.group(0).strip() if m else type(exc).__name__


class BoundedFetch:
    """fetch(url) for PEP 503 pages (url + '/'): each request has `timeout` seconds per read, all requests
    together end by `deadline` seconds after this object was made, and a page over `max_bytes` (decoded) is
    refused. A page that cannot be read is an OSError (the update goes on without it); the deadline or the
    cap is an InputError (exit 2: the update stops and writes nothing)."""

    def __init__(self, timeout: float, deadline: float = DEFAULT_DEADLINE, max_bytes: int = MAX_PAGE_BYTES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout, self.deadline, self.max_bytes, self.clock = timeout, deadline, max_bytes, clock
        self.stop_at = clock() + deadline

    def __call__(self, url: str) -> str:
        if url.startswith("file://"):
            return self._file(url)
        left = self.stop_at - self.clock()
        if left <= 0:
            raise self._late(url)
        box: Dict[str, Any] = {}

        def work() -> None:
            try:
                box["text"] = self._http(url)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="index-fetch", daemon=True)
        worker.start()
        worker.join(left)
        if worker.is_alive():  # a server that trickles bytes never trips the per-read timeout
            raise self._late(url)
        if "error" in box:
            raise box["error"]
        return box["text"]

    def _late(self, url: str) -> InputError:
        return InputError(f"{url}/: the package indexes did not answer within the {self.deadline:g}s deadline "
                          "(a stalled or very slow server); nothing was changed")

    def _too_big(self, url: str) -> InputError:
        return InputError(f"{url}/: the page is larger than {self.max_bytes >> 20} MiB, which no package index "
                          "page is; nothing was changed")

    def _http(self, url: str) -> str:
        import requests

        try:
            # a PEP 503 page is URL/; a file the pages link (PEP 825's NAME-VERSION-variants.json) is read as named
            wanted = url if url.endswith(".json") else url + "/"
            resp = requests.get(wanted, timeout=self.timeout, headers={"Accept": "text/html"}, stream=True)
        except requests.exceptions.SSLError as exc:  # pip may have certificates that requests lacks
            raise OSError(str(exc)) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
            raise IndexUnreachable(_short_reason(exc)) from None
        except requests.RequestException as exc:
            raise OSError(str(exc)) from None
        with resp:
            if resp.status_code != 200:
                raise OSError(f"HTTP {resp.status_code} for {url}/")
            declared = resp.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise self._too_big(url)
            body = bytearray()
            try:
                for chunk in resp.iter_content(_CHUNK):
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise self._too_big(url)
                    if self.clock() > self.stop_at:
                        raise self._late(url)
            except requests.RequestException as exc:
                raise OSError(str(exc)) from None
            return body.decode(resp.encoding or "utf-8", errors="replace")

    def _file(self, url: str) -> str:
        from pathlib import Path

        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        if path.is_dir():
            path = path / "index.html"
        with os.fdopen(open_regular(path), "rb") as fh:  # a FIFO named by a file:// index is refused, not waited on
            data = fh.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise self._too_big(url)
        return data.decode("utf-8", errors="replace")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self.hrefs.append(href)


def page_files(page: str) -> List[Tuple[str, str]]:
    """(file name, href) of every link on a PEP 503 page, the name taken from the href."""
    parser = _Links()
    parser.feed(page)
    parser.close()
    out = []
    for href in parser.hrefs:
        name = urllib.parse.unquote(href.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1])
        if name:
            out.append((name, href))
    return out


def file_version(filename: str) -> Optional[Tuple[str, Version]]:
    """(canonical project name, version) of a wheel or sdist file name; None for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _build, _tags = parse_wheel_filename(filename)
            return name, version
        name, version = parse_sdist_filename(filename)
        return name, version
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def released_versions(files: List[str], package: str) -> List[str]:
    """The versions of `package` the file names list (wheels and sdists), oldest first."""
    want = canonicalize_name(package)
    found = {v for name, v in filter(None, map(file_version, files)) if name == want}
    return [str(v) for v in sorted(found)]


def torch_patches(files: List[str], variant: str) -> Dict[str, List[str]]:
    """release ('2.9') -> final patch versions ('2.9.1') of torch wheels built for `variant` ('cu126')."""
    out: Dict[str, List[str]] = {}
    for f in files:
        if not f.endswith(".whl"):
            continue
        parsed = file_version(f)
        if parsed is None or parsed[0] != "torch":
            continue
        v = parsed[1]
        if v.local != variant or v.is_prerelease or v.is_postrelease or len(v.release) != 3:
            continue
        out.setdefault(f"{v.major}.{v.minor}", []).append(v.base_version)
    return out


def torch_listing(files: List[str]) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """variant -> release -> {"patches": final patch versions, "pythons": CPython tags ('3.14t')} of the torch
    wheels a page lists, whatever their variant (the local label)."""
    out: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for f in files:
        if not f.endswith(".whl"):
            continue
        try:
            name, v, _build, tags = parse_wheel_filename(f)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if name != "torch" or not v.local or v.is_prerelease or v.is_postrelease or len(v.release) != 3:
            continue
        row = out.setdefault(v.local, {}).setdefault(f"{v.major}.{v.minor}", {"patches": set(), "pythons": set()})
        row["patches"].add(v.base_version)
        for t in tags:
            m = re.match(r"^cp(\d)(\d+)$", t.interpreter)
            if m:
                row["pythons"].add(f"{m.group(1)}.{m.group(2)}{'t' if t.abi.endswith('t') else ''}")
    return out


def refresh(raw: Dict[str, Any], base: str, pip_url: Optional[str], fetch: Fetch,
            say: Callable[[str], None], learned: Optional[List[str]] = None,
            today: Optional[str] = None) -> Tuple[Dict[str, Any], List[str], int]:
    """A new index document from the bundled one plus what the live indexes list; what could not be read;
    how many torch index pages were read. What was learned beyond patches (a new release, a new variant) is
    said and appended to `learned`."""
    out = copy.deepcopy(raw)
    out["based_on"] = raw["generated"]
    failures: List[str] = []
    variants = sorted({v for rel in raw["torch"] for v, var in rel["variants"].items() if var["kind"] in ("cuda", "cpu")})
    seen: Dict[str, Dict[str, List[str]]] = {}  # variant -> release -> patch versions
    listing: Dict[str, Dict[str, Dict[str, Any]]] = {}  # variant -> release -> patches, pythons
    where: Dict[str, str] = {}  # variant -> the page it was read from
    variant_files: Dict[str, Tuple[str, str]] = {}  # torch version -> (name, URL) of its PEP 825 variants.json
    pages = 0
    for variant in [*variants, None]:  # None: the page listing every variant's wheels ({base}/torch)
        url = f"{base}/{variant}/torch" if variant else f"{base}/torch"
        try:
            page = fetch(url)
        except OSError as exc:
            failures.append(f"{url}/: {exc}")
            continue
        files = page_files(page)
        names = [name for name, _href in files]
        for name, href in files:
            m = _VARIANTS_JSON.match(name)
            if m:
                variant_files.setdefault(m.group(1), (name, urllib.parse.urljoin(url + "/", href.split("#", 1)[0])))
        if variant:
            seen[variant] = torch_patches(names, variant)
        for var, rels in torch_listing(names).items():
            if variant and var != variant:
                continue
            for minor, row in rels.items():
                into = listing.setdefault(var, {}).setdefault(minor, {"patches": set(), "pythons": set()})
                into["patches"] |= row["patches"]
                into["pythons"] |= row["pythons"]
                where.setdefault(var, url)
        pages += 1
        say(f"read {url}/")
    for var, rels in listing.items():
        for minor, row in rels.items():
            seen.setdefault(var, {}).setdefault(minor, [])
            seen[var][minor] = sorted(set(seen[var][minor]) | row["patches"], key=Version)
    day = today or time.strftime("%Y-%m-%d")
    learned = learned if learned is not None else []
    _learn(out, listing, where, day, say, learned)
    for version, (name, url) in sorted(variant_files.items()):
        try:
            text = fetch(url)
        except OSError as exc:
            failures.append(f"{url}: {exc}")
            continue
        _apply_variant_metadata(out, version, name, text, day, say, learned)
    for rel in out["torch"]:
        patches = [p for v in rel["variants"] for p in seen.get(v, {}).get(rel["version"], [])]
        if patches:
            newest = max(patches, key=Version)
            if Version(newest) > Version(rel["latest_patch"]):
                rel["latest_patch"], rel["patch_status"] = newest, "verified"
            elif newest == rel["latest_patch"]:
                rel["patch_status"] = "verified"
    if pip_url:
        url = f"{pip_url.rstrip('/')}/deepspeed"
        try:
            ds = released_versions([name for name, _href in page_files(fetch(url))], "deepspeed")
            say(f"read {url}/")
        except OSError as exc:
            failures.append(f"{pip_url}: {exc}")
            ds = []
        _add_deepspeed(out["deepspeed"]["releases"], ds)
    else:
        failures.append("no package index configured for pip (PIP_INDEX_URL / pip config); DeepSpeed releases not refreshed")
    return out, failures, pages


def _learn(out: Dict[str, Any], listing: Dict[str, Dict[str, Dict[str, Any]]], where: Dict[str, str], today: str,
           say: Callable[[str], None], learned: List[str]) -> None:
    """Minors newer than every known one, and variants a known release lacks, from the listings; a variant
    whose kind is unknown or whose CUDA has no driver facts is left out (said, never invented)."""
    from envdoctor.wheels.learn import add_variant, kind_of, new_release

    toolkits = out["drivers"]["toolkits"]
    skipped: set = set()

    def usable(var: str) -> bool:
        kind = kind_of(var)
        if kind is None:
            return False
        if kind == "cuda":
            cuda = f"{int(var[2:-1])}.{var[-1]}"
            if cuda not in toolkits:
                if var not in skipped:
                    skipped.add(var)
                    learned.append(f"{var} is listed but the index has no driver facts for CUDA {cuda}: not added")
                    say(learned[-1])
                return False
        return True

    minors: Dict[str, List[str]] = {}
    for var, rels in listing.items():
        for minor in rels:
            minors.setdefault(minor, []).append(var)
    for minor in sorted(minors, key=Version):
        rels = sorted(out["torch"], key=lambda r: Version(r["version"]))
        known = next((r for r in rels if r["version"] == minor), None)
        older = [r for r in rels if Version(r["version"]) < Version(minor)]
        previous = older[-1] if older else None
        if known is None and (previous is None or Version(minor) < Version(rels[-1]["version"])):
            continue  # older than the planned releases: history, not learned here
        names = sorted(v for v in set(minors[minor]) if usable(v))
        if known is None:
            if not names:
                continue
            patches = sorted({p for v in names for p in listing[v][minor]["patches"]}, key=Version)
            pythons = {p for v in names for p in listing[v][minor]["pythons"]}
            url = where[names[0]]
            entry = new_release(previous, patches[-1], names, pythons, f"PyTorch index listing, {url}/, {today}")
            if not entry["variants"]:
                continue
            out["torch"].insert(0, entry)
            out["torch"].sort(key=lambda r: Version(r["version"]), reverse=True)
            msg = (f"new release torch {patches[-1]}: variants {', '.join(entry['variants'])} "
                   f"(arch lists assumed from torch {previous['version']})")
            learned.append(msg)
            say(msg)
            continue
        for var in names:
            if var not in known["variants"] and add_variant(known, previous, var,
                                                            f"PyTorch index listing, {where[var]}/, {today}"):
                what = "arch list" if kind_of(var) == "cuda" else "platforms"
                msg = f"new variant torch {minor} {var} ({what} assumed from torch {known['variants'][var]['assumed_from']})"
                learned.append(msg)
                say(msg)


_VARIANTS_JSON = re.compile(r"^torch-(\d+\.\d+\.\d+)-variants\.json$")


def _apply_variant_metadata(out: Dict[str, Any], version: str, name: str, text: str, day: str,
                            say: Callable[[str], None], learned: List[str]) -> None:
    """A release's PEP 825 variants.json: each label that is a CUDA variant of the release gets the arch list its
    `nvidia :: sm_arch` properties declare (verified: read from the index), replacing an assumed one."""
    from envdoctor.wheels.variants import nvidia_build, read_variant_json

    try:
        meta = read_variant_json(text, name)
    except InputError as exc:
        learned.append(f"{exc}: not used")
        say(learned[-1])
        return
    minor = ".".join(version.split(".")[:2])
    rel = next((r for r in out["torch"] if r["version"] == minor), None)
    if rel is None or rel["latest_patch"] != version:
        return
    for label, props in meta.variants.items():
        var = rel["variants"].get(label)
        build = nvidia_build(props)
        if var is None or var.get("kind") != "cuda" or build is None or not build.sm:
            continue
        if build.variant != label:
            learned.append(f"{name}: {label} declares CUDA >= {build.cuda_lower}, not {var.get('cuda')}: not used")
            say(learned[-1])
            continue
        read_from = f"PyTorch index metadata, {name}, {day}"
        for row in var["platforms"].values():
            row.update(sm=list(build.sm), ptx=list(build.ptx), status="verified", read_from=read_from)
            for key in ("sm_unverified", "ptx_unverified", "note"):
                row.pop(key, None)
        var["variant_properties"] = props
        var["status"] = "verified"
        var.pop("assumed_from", None)
        var["note"] = f"arch list read from {name} (PEP 825 variant metadata: nvidia :: sm_arch)"
        learned.append(f"torch {minor} {label}: arch list read from {name}")
        say(learned[-1])


def _add_deepspeed(releases: List[Dict[str, Any]], listed: List[str]) -> None:
    """Releases newer than every known one go first, UNVERIFIED, with the newest known one's table."""
    known = {r["version"] for r in releases}
    newest_known = max(releases, key=lambda r: Version(r["version"]))
    for v in listed:
        if Version(v) > Version(newest_known["version"]) and v not in known and not Version(v).is_prerelease:
            entry = dict(newest_known, version=v, status="UNVERIFIED", date=None)
            entry["note"] = ("seen on the package index; torch requirement and CUDA table assumed "
                             "as the newest known release")
            releases.insert(0, entry)

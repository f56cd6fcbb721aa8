"""Exact versions from a PEP 503 index page (`<base>/<variant>/<package>/`), and URL checks.

Wheel file names are read by `packaging.utils` and matched to the target Python and platform by
`packaging.tags` (so a free-threaded `3.13t` takes `cp313t` wheels and never `cp313` or `abi3` ones).
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from packaging import tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from envdoctor.errors import InputError
from envdoctor.install.indexes import TORCH_INDEX_ENV
from envdoctor.redact import scrub_secrets
from envdoctor.versions import major_minor, require_major_minor
from envdoctor.wheels.remote import DEFAULT_DEADLINE, BoundedFetch, IndexUnreachable, page_files

# The target's glibc is not known here, so every manylinux level counts; pip checks it when it downloads.
_GLIBC_MINORS = range(99, 4, -1)


def check_index_url(url: str, what: str = "--index-base") -> str:
    """http(s) URLs with a host (and file:// for a mirror on local disk); anything else is bad input (exit 2).
    Messages show the URL without its credentials."""
    shown = scrub_secrets(url)
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise InputError(f"{what} {shown!r}: a URL cannot contain spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL": http://[::1
        raise InputError(f"{what} {shown!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise InputError(f"{what} {shown!r}: only http://, https:// or file:// index URLs are allowed")
    try:
        host = parts.hostname
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as exc:
        raise InputError(f"{what} {shown!r}: {exc}") from None
    if scheme != "file" and not host:
        raise InputError(f"{what} {shown!r}: no host name")
    if scheme == "file" and not parts.path.strip("/"):
        raise InputError(f"{what} {shown!r}: no path")
    return url.rstrip("/")


def fetch_page(url: str, timeout: float = 30.0, deadline: float = DEFAULT_DEADLINE) -> str:
    """The text of an index page, under the same overall deadline and size cap as `index update`.
    IndexUnreachable: its host does not answer; OSError: the page cannot be read (404, TLS, ...);
    InputError (exit 2): past the deadline or the cap."""
    return BoundedFetch(timeout, deadline)(url)


def wheel_files(page: str) -> List[Tuple[str, str]]:
    """(filename, href) of every wheel link on a PEP 503 page."""
    return [(name, href) for name, href in page_files(page) if name.endswith(".whl")]


def platform_tags(platform: str) -> List[str]:
    """Wheel platform tags installable on a wheel-index platform ('linux_x86_64', 'linux_aarch64', 'win_amd64')."""
    if not platform.startswith("linux_"):
        return [platform]
    arch = platform[len("linux_"):]
    return ([f"manylinux_2_{minor}_{arch}" for minor in _GLIBC_MINORS]
            + [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", platform])


@functools.lru_cache(maxsize=64)
def supported_tags(python: str, platforms: Tuple[str, ...]) -> FrozenSet[tags.Tag]:
    """The wheel tags CPython `python` ('3.12', or '3.13t' for a free-threaded build) installs on these platforms."""
    free_threaded = python.endswith("t")
    version = require_major_minor(python[:-1] if free_threaded else python, "Python version")
    interpreter = f"cp{version[0]}{version[1]}"
    abi = interpreter + ("t" if free_threaded else "")
    out = {t for t in tags.cpython_tags(version, abis=[abi], platforms=platforms)
           if not (free_threaded and t.abi == "abi3")}  # the stable ABI does not load in a free-threaded build
    out.update(tags.compatible_tags(version, interpreter, platforms))
    return frozenset(out)


def wheel_fits(wheel_tags: Iterable[tags.Tag], python: str, platform: Optional[str]) -> bool:
    """Whether a wheel with these tags installs on the target; an unknown platform checks the Python tags only."""
    wheel_tags = frozenset(wheel_tags)
    plats = platform_tags(platform) if platform else sorted({t.platform for t in wheel_tags})
    return not wheel_tags.isdisjoint(supported_tags(python, tuple(plats)))


def newest_version(page: str, package: str, series: str, local: Optional[str], python: str,
                   platform: Optional[str]) -> Optional[str]:
    """The newest `package` version in `series` (e.g. '2.9') with local label `local` and a wheel for the target."""
    best: Optional[Version] = None
    name = canonicalize_name(package)
    want = major_minor(series)
    for fname, _href in wheel_files(page):
        try:
            wname, v, _build, wheel_tags = parse_wheel_filename(fname)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if canonicalize_name(wname) != name or (v.local or None) != (local or None) or major_minor(v) != want:
            continue
        if wheel_fits(wheel_tags, python, platform) and (best is None or v > best):
            best = v
    return str(best) if best is not None else None


INDEX_BASE_OPTION = "--index-base"
UNREACHABLE_WAY_OUT = (f"point {TORCH_INDEX_ENV} or {INDEX_BASE_OPTION} at a reachable index or a mirror of it "
                       "(laid out as URL/<variant>/<package>/)")


def unreachable_message(url: str, why: str) -> str:
    """The one line for an index that does not answer: the URL without credentials, the error, the way out."""
    return scrub_secrets(f"cannot reach the PyTorch index {url}/ ({why}); {UNREACHABLE_WAY_OUT}")


def way_out_through(text: str, control: str) -> str:
    """`text` with the way out of an unreachable index naming `control` (the TUI's index box) for --index-base."""
    return text.replace(UNREACHABLE_WAY_OUT, UNREACHABLE_WAY_OUT.replace(INDEX_BASE_OPTION, control))


def first_unreachable(urls: Iterable[str], timeout: float = 15.0) -> Optional[str]:
    """unreachable_message for the first of these index pages whose host does not answer; None: all answered."""
    for url in dict.fromkeys(u.rstrip("/") for u in urls):
        try:
            fetch_page(url, timeout)
        except IndexUnreachable as exc:
            return unreachable_message(url, str(exc))
        except OSError:
            continue  # it answered (404, TLS): pip has the last word
    return None


def resolve_versions(base: str, wants: Dict[str, Tuple[str, str]], python: str, platform: Optional[str],
                     timeout: float = 30.0, deadline: float = DEFAULT_DEADLINE) -> Tuple[Dict[str, str], List[str]]:
    """{package: exact version} for each {package: (series, variant)}, and notes on what could not be read.
    All pages within one `deadline`, each under the size cap (InputError past either: nothing was changed).
    Raises IndexUnreachable (with unreachable_message) when the index's host does not answer: pip could not
    download from it either."""
    fetch = BoundedFetch(timeout, deadline)
    found: Dict[str, str] = {}
    notes: List[str] = []
    for pkg, (series, variant) in wants.items():
        url = f"{base}/{variant}/{pkg}"
        try:
            page = fetch(url)
        except IndexUnreachable as exc:
            raise IndexUnreachable(unreachable_message(url, str(exc))) from None
        except OSError as exc:
            notes.append(scrub_secrets(f"could not read {url}/ ({exc}); using the wheel index's version"))
            continue
        v = newest_version(page, pkg, series, variant, python, platform)
        if v is None:
            notes.append(scrub_secrets(f"no {pkg} {series}.*+{variant} wheel for Python {python} on {url}/; "
                                       "using the wheel index's version"))
            continue
        found[pkg] = v
    return found, notes

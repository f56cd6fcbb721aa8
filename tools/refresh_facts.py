"""Read the real wheel metadata of every torch release and platform into facts/registry.json (a maintainer tool).

For each release on the registry (PyPI's JSON API, `--registry`), one wheel per platform is read: its METADATA
from the PEP 658 `.metadata` file where the registry serves one, otherwise from the wheel itself through HTTP
range requests (the zip's tail, its central directory, then only the METADATA and torch/version.py members: about
1.5 MB of a 500 MB wheel). From that: the variant (`torch.__version__`'s local label in torch/version.py, else
the CUDA runtime pin), CUDA, the cuda-toolkit / cuDNN / NCCL / nvshmem / cuSPARSELt / Triton pins,
Requires-Python and the Python tags of the release's wheels. The PyTorch index (`--torch-index`, one PEP 503
page per variant) is read the same way where reachable: its wheels carry their variant in the version.

Every fact carries its source ("registry metadata, FILE, DATE") and status `verified`. The run then compares:
- with the facts already in facts/registry.json: a verified fact is never changed silently; a different
  reading is reported and kept out unless `--accept` is given;
- with the RELEASE.md-derived facts of facts/matrix.json (cuDNN, NCCL, the PyPI default, the Python floor):
  every disagreement is listed in the output's `disagreements` and printed.

Usage: python tools/refresh_facts.py [--releases '>=2.14'] [--accept] [--registry URL] [--torch-index URL]
       [--facts facts/registry.json] [--matrix facts/matrix.json] [--dry-run]
Exit: 0 written (or nothing changed), 1 a verified fact disagrees and --accept was not given (nothing written),
2 bad input or the registry unreachable. Then run tools/build_index.py to rebuild wheels_index.json.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import sys
import time
import urllib.parse
import urllib.request
from email.parser import Parser
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from packaging.requirements import InvalidRequirement, Requirement  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402
from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

from envdoctor.wheels.ranged_zip import RangedZip, RangeGet, urllib_range_get  # noqa: E402
from envdoctor.wheels.remote import page_files  # noqa: E402
from envdoctor.wheels.variants import nvidia_build, read_variant_json, split_label  # noqa: E402

SCHEMA = "envdoctor.registry_facts/1"
DEFAULT_REGISTRY = "https://pypi.org/pypi"
DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl"
DEFAULT_FACTS = ROOT / "facts" / "registry.json"
DEFAULT_MATRIX = ROOT / "facts" / "matrix.json"
PIN_FIELDS = ("variant", "cuda", "cuda_toolkit", "cuda_runtime", "cudnn", "nccl", "nvshmem", "cusparselt", "triton",
              "requires_python")
# Requires-Dist name (cu12/cu13 suffix dropped) -> fact field
_PINS = {"cuda-toolkit": "cuda_toolkit", "nvidia-cuda-runtime": "cuda_runtime", "nvidia-cudnn": "cudnn",
         "nvidia-nccl": "nccl", "nvidia-nvshmem": "nvshmem", "nvidia-cusparselt": "cusparselt", "triton": "triton"}

Get = Callable[[str], bytes]  # a whole small document (a JSON page, a .metadata file)


def platform_of(tags: Any) -> Optional[str]:
    """envdoctor's platform for a wheel's tags; None for platforms envdoctor does not plan (macOS, win_arm64)."""
    for t in tags:
        p = t.platform
        if p.endswith("_x86_64") and ("linux" in p):
            return "linux_x86_64"
        if p.endswith("_aarch64") and "linux" in p:
            return "linux_aarch64"
        if p == "win_amd64":
            return "win_amd64"
    return None


def python_of(tags: Any) -> Optional[str]:
    """'3.12' / '3.14t' for a CPython wheel's interpreter and ABI tags."""
    for t in tags:
        m = re.match(r"^cp(\d)(\d+)$", t.interpreter)
        if m:
            return f"{m.group(1)}.{m.group(2)}{'t' if t.abi.endswith('t') else ''}"
    return None


_MARKER_ENV = {
    "linux_x86_64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64", "os_name": "posix"},
    "linux_aarch64": {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "aarch64",
                      "os_name": "posix"},
    "win_amd64": {"platform_system": "Windows", "sys_platform": "win32", "platform_machine": "AMD64", "os_name": "nt"},
}


def parse_metadata(text: str, platform: Optional[str] = None, python: Optional[str] = None) -> Dict[str, Any]:
    """The facts a torch METADATA states for a wheel of `platform` and `python` ('3.11'): Requires-Python, the
    pins of its CUDA wheels and Triton (a pin whose environment marker excludes the platform is left out), its
    version."""
    env = dict(_MARKER_ENV.get(platform or "", {}))
    if python:
        env.update(python_version=python.rstrip("t"), python_full_version=python.rstrip("t") + ".0",
                   implementation_name="cpython", platform_python_implementation="CPython", extra="")
    msg = Parser().parsestr(text, headersonly=True)
    out: Dict[str, Any] = {"version": msg.get("Version"), "requires_python": msg.get("Requires-Python")}
    classifiers = [c.rsplit("::", 1)[1].strip() for c in msg.get_all("Classifier") or []
                   if c.startswith("Programming Language :: Python :: 3.")]
    out["classifier_pythons"] = sorted(set(classifiers), key=lambda v: Version(v))
    for line in msg.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and ("extra" in str(req.marker) or (env and not req.marker.evaluate(env))):
            continue
        name = re.sub(r"-cu\d+$", "", req.name.lower())
        field = _PINS.get(name)
        if field is None:
            continue
        spec = str(req.specifier)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        out[field] = spec if field == "triton" else (exact[0] if exact else spec)
    return out


def variant_from(version_py: Optional[str], meta: Dict[str, Any]) -> Tuple[Optional[str], Optional[str], str]:
    """(variant, CUDA X.Y, how it was read): torch/version.py's `__version__` label and `cuda`, else the
    local label of the METADATA version, else the CUDA pins (a CPU build pins none)."""
    if version_py:
        label = re.search(r"__version__\s*=\s*'[^'+]*\+([^']+)'", version_py)
        cuda = re.search(r"^cuda(?:: Optional\[str\])?\s*=\s*'([\d.]+)'", version_py, re.M)
        cu = cuda.group(1) if cuda else None
        if label:
            return label.group(1), cu, "torch/version.py"
        if cu:
            return "cu" + cu.replace(".", ""), cu, "torch/version.py (cuda; unlabelled version)"
        return "cpu", None, "torch/version.py (cuda None; unlabelled version)"
    try:
        local = Version(meta.get("version") or "").local
    except InvalidVersion:
        local = None
    if local:
        m = re.match(r"^cu(\d+)(\d)$", local)
        return local, f"{m.group(1)}.{m.group(2)}" if m else None, "METADATA version"
    pin = meta.get("cuda_toolkit") or meta.get("cuda_runtime")
    m = re.match(r"^(\d+)\.(\d+)", str(pin or ""))
    if m:
        return f"cu{m.group(1)}{m.group(2)}", f"{m.group(1)}.{m.group(2)}", "CUDA pins in METADATA"
    return None, None, "not stated (no version.py read, no local label, no CUDA pin)"


class Reader:
    """Reads documents and wheel members over HTTP, counting bytes and requests."""

    def __init__(self, get: Optional[Get] = None, range_get: Optional[RangeGet] = None, timeout: float = 30.0,
                 today: Optional[str] = None) -> None:
        self.get = get or _urllib_get(timeout)
        self.range_get = range_get or urllib_range_get(timeout)
        self.bytes_read = 0
        self.requests = 0
        self.today = today or _dt.date.today().isoformat()

    def document(self, url: str) -> bytes:
        data = self.get(url)
        self.bytes_read += len(data)
        self.requests += 1
        return data

    def wheel_facts(self, filename: str, url: str, has_metadata: bool, size: Optional[int],
                    platform: Optional[str] = None, python: Optional[str] = None) -> Dict[str, Any]:
        """One wheel's facts with their source and how many bytes it cost."""
        version_py = None
        variant_props: Optional[Dict[str, Any]] = None
        cost: Optional[int] = None
        if has_metadata:
            text = self.document(url.split("#", 1)[0] + ".metadata").decode("utf-8", errors="replace")
            how = "PEP 658 metadata"
            if variant_from(None, parse_metadata(text, platform, python))[0] is None:
                # the METADATA does not say the build (no local label, no CUDA pin): torch/version.py does
                z = RangedZip(url.split("#", 1)[0], self.range_get)
                if "torch/version.py" in z.members:
                    version_py = z.read("torch/version.py").decode("utf-8", errors="replace")
                how, cost = "PEP 658 metadata + torch/version.py by range requests", z.bytes_read
                self.bytes_read += z.bytes_read
                self.requests += z.requests
        else:
            z = RangedZip(url.split("#", 1)[0], self.range_get)
            md = z.find(lambda n: n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
            if md is None:
                raise OSError(f"{filename}: no *.dist-info/METADATA member")
            text = z.read(md).decode("utf-8", errors="replace")
            if "torch/version.py" in z.members:
                version_py = z.read("torch/version.py").decode("utf-8", errors="replace")
            vj = z.find(lambda n: n.count("/") == 1 and n.endswith(".dist-info/variant.json"))
            label = split_label(filename)[1]
            if vj and label:  # a PEP 825 variant wheel: the properties its label stands for
                meta = read_variant_json(z.read(vj).decode("utf-8", errors="replace"), f"{filename}: {vj}")
                variant_props = meta.variants.get(label)
            how, cost = "range requests (central directory + METADATA)", z.bytes_read
            self.bytes_read += z.bytes_read
            self.requests += z.requests
        meta = parse_metadata(text, platform, python)
        variant, cuda, variant_how = variant_from(version_py, meta)
        facts = {k: meta.get(k) for k in ("cuda_toolkit", "cuda_runtime", "cudnn", "nccl", "nvshmem", "cusparselt",
                                          "triton", "requires_python") if meta.get(k)}
        facts.update(variant=variant, cuda=cuda, variant_read_from=variant_how, status="verified",
                     read_from=f"registry metadata, {filename}, {self.today}", read_by=how)
        if variant_props is not None:
            facts["variant_properties"] = variant_props
            build = nvidia_build(variant_props)
            if build is not None:
                facts.update(variant_label=split_label(filename)[1], sm=build.sm, ptx=build.ptx)
        if cost is not None:
            facts["bytes_read"] = cost
        if size:
            facts["file_size"] = size
        return {k: v for k, v in facts.items() if v is not None}


def _urllib_get(timeout: float) -> Get:
    def get(url: str) -> bytes:
        req = urllib.request.Request(url, headers={"User-Agent": "envdoctor-refresh-facts",
                                                   "Accept": "application/json, text/html;q=0.5"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read(64 << 20)

    return get


def registry_releases(project_json: Dict[str, Any], base_url: str, spec: SpecifierSet) -> Dict[str, List[Dict[str, Any]]]:
    """version -> its non-yanked wheels (filename, url, platform, python, metadata served, size, uploaded)."""
    out: Dict[str, List[Dict[str, Any]]] = {}
    for ver, files in (project_json.get("releases") or {}).items():
        try:
            v = Version(ver)
        except InvalidVersion:
            continue
        if v.is_prerelease or v not in spec:
            continue
        for f in files:
            if f.get("yanked") or not str(f.get("filename", "")).endswith(".whl"):
                continue
            try:
                _n, _v, _b, tags = parse_wheel_filename(split_label(f["filename"])[0])
            except InvalidWheelFilename:
                continue
            out.setdefault(ver, []).append({
                "filename": f["filename"], "url": urllib.parse.urljoin(base_url, f["url"]),
                "platform": platform_of(tags), "python": python_of(tags),
                "metadata": bool(f.get("core_metadata") or f.get("data_dist_info_metadata")),
                "size": f.get("size"), "uploaded": str(f.get("upload_time") or "")[:10]})
    return out


def pick(wheels: List[Dict[str, Any]], platform: str) -> Optional[Dict[str, Any]]:
    """The wheel read for a platform: the oldest non-free-threaded CPython (its pins are the release's)."""
    cands = [w for w in wheels if w["platform"] == platform and w["python"] and not w["python"].endswith("t")]
    return min(cands, key=lambda w: Version(w["python"]), default=None)


def pythons(wheels: List[Dict[str, Any]], platform: str) -> List[str]:
    vals = {w["python"] for w in wheels if w["platform"] == platform and w["python"]}
    return sorted(vals, key=lambda p: (Version(p.rstrip("t")), p.endswith("t")))


def read_registry(reader: Reader, registry: str, spec: SpecifierSet, say: Callable[[str], None]) -> Dict[str, Any]:
    """releases -> version -> {uploaded, platforms: {platform: facts + pythons}}, and what could not be read."""
    url = f"{registry.rstrip('/')}/torch/json"
    doc = json.loads(reader.document(url))
    releases: Dict[str, Any] = {}
    failures: List[str] = []
    for ver, wheels in sorted(registry_releases(doc, url, spec).items(), key=lambda kv: Version(kv[0])):
        rel: Dict[str, Any] = {"uploaded": min(w["uploaded"] for w in wheels), "platforms": {}}
        for plat in ("linux_x86_64", "linux_aarch64", "win_amd64"):
            w = pick(wheels, plat)
            if w is None:
                continue
            try:
                facts = reader.wheel_facts(w["filename"], w["url"], w["metadata"], w["size"], plat, w["python"])
            except (OSError, ValueError) as exc:
                failures.append(f"{w['filename']}: {exc}")
                continue
            facts["pythons"] = pythons(wheels, plat)
            rel["platforms"][plat] = facts
            say(f"{ver} {plat}: {facts.get('variant')} ({facts.get('read_by')})")
        releases[ver] = rel
    return {"releases": releases, "failures": failures}


def read_torch_index(reader: Reader, base: str, variants: List[str], spec: SpecifierSet,
                     say: Callable[[str], None]) -> Dict[str, Any]:
    """variant -> version -> platform -> facts, from the PyTorch index's per-variant pages; unreachable pages listed."""
    out: Dict[str, Any] = {}
    failures: List[str] = []
    for variant in variants:
        url = f"{base.rstrip('/')}/{variant}/torch/"
        try:
            page = reader.document(url).decode("utf-8", errors="replace")
        except OSError as exc:
            failures.append(f"{url}: {exc}")
            continue
        served = set(re.findall(r'href="([^"]+)"[^>]*data-(?:dist-info|core)-metadata="(?!false)', page))
        wheels: Dict[str, List[Dict[str, Any]]] = {}
        for name, href in page_files(page):
            try:
                _n, v, _b, tags = parse_wheel_filename(split_label(name)[0])
            except InvalidWheelFilename:
                continue
            if v.local != variant or v.is_prerelease or Version(v.public) not in spec:
                continue
            wheels.setdefault(v.public, []).append({
                "filename": name, "url": urllib.parse.urljoin(url, href), "platform": platform_of(tags),
                "python": python_of(tags), "metadata": href in served, "size": None})
        for ver, ws in wheels.items():
            for plat in ("linux_x86_64", "linux_aarch64", "win_amd64"):
                w = pick(ws, plat)
                if w is None:
                    continue
                try:
                    facts = reader.wheel_facts(w["filename"], w["url"], w["metadata"], None, plat, w["python"])
                except (OSError, ValueError) as exc:
                    failures.append(f"{w['filename']}: {exc}")
                    continue
                facts["pythons"] = pythons(ws, plat)
                facts["read_from"] = facts["read_from"].replace("registry metadata", "PyTorch index metadata")
                out.setdefault(variant, {}).setdefault(ver, {})[plat] = facts
        say(f"read {url}")
    return {"variants": out, "failures": failures}


def release_md_disagreements(registry: Dict[str, Any], matrix: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Where the registry's metadata and the RELEASE.md-derived facts (matrix.json) state different values."""
    out: List[Dict[str, Any]] = []
    minors = {r["version"]: r for r in matrix.get("torch_releases", [])}
    oldest = min((Version(v) for v in minors), default=Version("0"))
    for ver, rel in registry.items():
        mm = ".".join(ver.split(".")[:2])
        m = minors.get(mm)
        if m is None:
            if Version(mm) > oldest:  # older releases are history (cuda_history.json), not RELEASE.md facts
                out.append({"release": ver, "fact": "release", "registry": ver, "release_md": None,
                            "why": f"the fact base has no torch {mm}"})
            continue
        x86 = rel["platforms"].get("linux_x86_64") or {}
        if x86.get("variant") and x86["variant"] != m.get("pypi_default_linux_x86_64"):
            out.append({"release": ver, "fact": "pypi_default.linux_x86_64", "registry": x86["variant"],
                        "release_md": m.get("pypi_default_linux_x86_64"), "read_from": x86["read_from"]})
        for plat, facts in rel["platforms"].items():
            var = (m.get("variants") or {}).get(facts.get("variant") or "")
            for field in ("cudnn", "nccl"):
                if var and facts.get(field) and var.get(field) and facts[field] != var[field]:
                    out.append({"release": ver, "fact": f"{facts['variant']}.{field} ({plat})", "registry": facts[field],
                                "release_md": var[field], "read_from": facts["read_from"]})
        tags = [p for p in x86.get("pythons") or [] if not p.endswith("t")]
        if tags and m.get("python") and Version(min(tags, key=Version)) != Version(m["python"][0]):
            out.append({"release": ver, "fact": "python floor (oldest wheel)", "registry": min(tags, key=Version),
                        "release_md": m["python"][0], "read_from": x86["read_from"]})
    return out


def index_disagreements(registry: Dict[str, Any], index: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Where the registry and the wheel index in use (wheels_index.json) differ: the newest patch of a minor, a
    minor it lacks, the PyPI default per platform, the Triton pin."""
    out: List[Dict[str, Any]] = []
    rels = {r["version"]: r for r in index.get("torch", [])}
    newest: Dict[str, str] = {}
    for ver in registry:
        mm = ".".join(ver.split(".")[:2])
        if Version(ver).major >= 2 and Version(ver) > Version(newest.get(mm, "0")):
            newest[mm] = ver
    for mm, ver in newest.items():
        facts = registry[ver]["platforms"]
        x86 = facts.get("linux_x86_64") or {}
        rel = rels.get(mm)
        if rel is None:
            out.append({"release": ver, "fact": "release", "registry": ver, "index": None,
                        "read_from": x86.get("read_from")})
            continue
        if rel.get("latest_patch") != ver:
            out.append({"release": mm, "fact": "latest_patch", "registry": ver, "index": rel.get("latest_patch"),
                        "read_from": x86.get("read_from")})
        for plat, pf in facts.items():
            said = ((rel.get("pypi_default") or {}).get(plat) or {}).get("variant")
            if pf.get("variant") and said != pf["variant"]:
                out.append({"release": ver, "fact": f"pypi_default.{plat}", "registry": pf["variant"], "index": said,
                            "read_from": pf.get("read_from")})
        tri = ((rel.get("companions") or {}).get("triton") or {}).get("requirement")
        if x86.get("triton") and tri != x86["triton"]:
            out.append({"release": ver, "fact": "triton", "registry": x86["triton"], "index": tri,
                        "read_from": x86.get("read_from")})
    return out


def merge(old: Dict[str, Any], new: Dict[str, Any], accept: bool) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The new reading over the old facts; a verified old fact that reads differently now is kept (and
    reported) unless `accept`."""
    conflicts: List[Dict[str, Any]] = []
    merged = json.loads(json.dumps(old))
    for ver, rel in new.items():
        into = merged.setdefault(ver, {"uploaded": rel["uploaded"], "platforms": {}})
        into["uploaded"] = rel["uploaded"]
        for plat, facts in rel["platforms"].items():
            was = (into.get("platforms") or {}).get(plat)
            changed = {f: (was.get(f), facts.get(f)) for f in (*PIN_FIELDS, "pythons")
                       if was and was.get("status") == "verified" and was.get(f) != facts.get(f)}
            if changed and not accept:
                conflicts.extend({"release": ver, "platform": plat, "fact": f, "was": a, "now": b,
                                  "was_read_from": was.get("read_from"), "now_read_from": facts.get("read_from")}
                                 for f, (a, b) in changed.items())
                continue
            into.setdefault("platforms", {})[plat] = facts
    return merged, conflicts


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", default="", help="version specifier of the torch releases to read (default all)")
    ap.add_argument("--registry", default=DEFAULT_REGISTRY, help="JSON API base (default %(default)s)")
    ap.add_argument("--torch-index", default=DEFAULT_TORCH_INDEX, help="PyTorch index base (default %(default)s); "
                    "'' to skip it")
    ap.add_argument("--variants", default="", help="comma-separated PyTorch index variants (default: the fact base's)")
    ap.add_argument("--facts", default=str(DEFAULT_FACTS))
    ap.add_argument("--matrix", default=str(DEFAULT_MATRIX))
    ap.add_argument("--index", default=str(ROOT / "wheels_index.json"), help="the wheel index compared (default %(default)s)")
    ap.add_argument("--accept", action="store_true", help="let new readings replace verified facts that disagree")
    ap.add_argument("--dry-run", action="store_true", help="read and compare, write nothing")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--today", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    def say(msg: str) -> None:
        print(f"refresh_facts: {msg}", file=sys.stderr, flush=True)

    spec = SpecifierSet(args.releases)
    matrix = json.loads(Path(args.matrix).read_text(encoding="utf-8"))
    facts_path = Path(args.facts)
    old = json.loads(facts_path.read_text(encoding="utf-8")) if facts_path.exists() else {}
    if old and old.get("schema") != SCHEMA:
        print(f"{facts_path}: schema {old.get('schema')!r}, expected {SCHEMA!r}", file=sys.stderr)
        return 2
    reader = Reader(timeout=args.timeout, today=args.today)
    started = time.monotonic()
    try:
        reg = read_registry(reader, args.registry, spec, say)
    except (OSError, ValueError) as exc:
        print(f"refresh_facts: {args.registry}: {exc}", file=sys.stderr)
        return 2
    variants = [v for v in args.variants.split(",") if v] or sorted(
        {n for r in matrix["torch_releases"] for n in r["variants"]} | {"cpu"})
    idx = read_torch_index(reader, args.torch_index, variants, spec, say) if args.torch_index else \
        {"variants": {}, "failures": ["--torch-index '' : not read"]}
    merged, conflicts = merge(old.get("releases") or {}, reg["releases"], args.accept)
    disagreements = release_md_disagreements(reg["releases"], matrix)
    index_doc = json.loads(Path(args.index).read_text(encoding="utf-8")) if Path(args.index).exists() else {}
    stale = index_disagreements(reg["releases"], index_doc)
    doc = {
        "schema": SCHEMA, "read": reader.today,
        "doc": ("Facts read from the registry's wheel metadata by tools/refresh_facts.py: per torch release, one "
                "wheel per platform (PEP 658 metadata where served, else its METADATA and torch/version.py through "
                "HTTP range requests). status verified = read from that file on that day. torch_index: the same "
                "from the PyTorch index's per-variant pages. disagreements: where RELEASE.md-derived facts "
                "(matrix.json) say otherwise."),
        "registry": args.registry, "torch_index_base": args.torch_index,
        "releases": dict(sorted(merged.items(), key=lambda kv: Version(kv[0]))),
        "torch_index": {**(old.get("torch_index") or {}), **idx["variants"]},
        "unreadable": reg["failures"] + idx["failures"],
        "disagreements": disagreements,
    }
    if args.dry_run or stale:
        doc["index_differs"] = stale
    elapsed = time.monotonic() - started
    say(f"{len(reg['releases'])} releases, {reader.requests} requests, {reader.bytes_read / 1e6:.1f} MB in {elapsed:.1f}s")
    for d in disagreements:
        say(f"disagrees with RELEASE.md: torch {d['release']} {d['fact']}: registry {d['registry']!r}, "
            f"fact base {d['release_md']!r}")
    for d in stale:
        say(f"the wheel index differs: torch {d['release']} {d['fact']}: registry {d['registry']!r}, index {d['index']!r}")
    for f in doc["unreadable"][:10]:
        say(f"not read: {f}")
    if conflicts:
        for c in conflicts:
            say(f"VERIFIED FACT DIFFERS: torch {c['release']} {c['platform']} {c['fact']}: was {c['was']!r} "
                f"({c['was_read_from']}), now {c['now']!r} ({c['now_read_from']}); rerun with --accept to take it")
        return 1
    if not args.dry_run:
        facts_path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        say(f"wrote {facts_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

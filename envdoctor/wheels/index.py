"""The wheel index (`wheels_index.json`): its schema check, and typed access.

`load_index(path)` reads one file; which file (ENVDOCTOR_WHEELS_INDEX, the user copy written by
`envdoctor index update`, the bundled copy) is chosen at the edges (`envdoctor.settings`).
Validation collects every problem, each naming the file and the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envdoctor import data_schemas
from envdoctor.bounded_read import read_bytes
from envdoctor.data_files import data_path, decode_json, files_key
from envdoctor.errors import InputError
from envdoctor.validation_cache import NO_CACHE, ValidationCache, fingerprint
from envdoctor.versions import major_minor, series

SCHEMA = "envdoctor.wheels_index/1"
FILE_SCHEMA = "wheels-index.schema.json"  # envdoctor/data/: the document's sections and their types
# What a section that breaks the schema has always been told.
_SECTION_SAYS = {
    "default_index_base": "must be an http(s) or file URL",
    "drivers": "missing or not an object",
    "torch": "missing or empty list",
    "torch_history": "must be a list",
    "nvcc_sass": "must map a CUDA version to its SASS targets",
    "python_wheels": "needs platforms and releases lists",
    "pypi_unlabelled_linux_x86_64": "needs a releases list",
    "deepspeed": "needs a releases list",
}
STATUSES = ("verified", "secondary", "UNVERIFIED", "assumed")  # assumed: copied from the previous release (assumed_from)
KINDS = ("cpu", "cuda", "rocm", "xpu")
PLATFORMS = ("linux_x86_64", "linux_aarch64", "win_amd64")
_ARCH = re.compile(r"^(sm|compute)_\d{2,3}[af]?$")
_PY = re.compile(r"^3\.\d{1,2}t?$")
_ANY_PY = re.compile(r"^[23]\.\d{1,2}t?$")  # torch 1.0-1.4 shipped Python 2.7 wheels
_DRIVER = re.compile(r"^\d{3}(\.\d{1,3}){0,2}$")
_VARIANT = {"cuda": re.compile(r"^cu\d{2,3}$"), "rocm": re.compile(r"^rocm\d+(\.\d+)*$"), "cpu": re.compile(r"^cpu$"),
            "xpu": re.compile(r"^xpu$")}


def bundled_path() -> Path:
    """The index shipped with envdoctor: inside an installed wheel, or at the root of a checkout."""
    return data_path("wheels_index.json")


@dataclass
class Variant:
    release: str
    name: str
    kind: str
    cuda: Optional[str]
    status: str
    platforms: Dict[str, Dict[str, Any]]
    cudnn: Optional[str] = None
    nccl: Optional[str] = None
    note: Optional[str] = None
    assumed_from: Optional[str] = None  # "2.14 cu132": the arch list and pins were copied from there, not read
    listed: bool = True  # whether the build is known to exist (read from an index or its metadata), not assumed

    def assumed(self, platform: str) -> bool:
        """Whether this variant's facts on `platform` are assumed from a previous release rather than read."""
        return self.status == "assumed" or (self.platforms.get(platform) or {}).get("status") == "assumed"

    def archs(self, platform: str) -> Tuple[List[str], List[str]]:
        """(SASS, PTX) counted for planning on a platform; *_unverified targets are left out."""
        p = self.platforms.get(platform) or {}
        return list(p.get("sm") or []), list(p.get("ptx") or [])


@dataclass
class Release:
    version: str
    latest_patch: str
    patch_status: str
    python: List[str]
    python_experimental: List[str]
    pypi_default: Dict[str, str]
    variants: Dict[str, Variant]
    companions: Dict[str, Dict[str, Any]]
    key: Version = field(init=False)

    def __post_init__(self) -> None:
        self.key = Version(self.version)


@dataclass
class DeepSpeedRelease:
    version: str
    torch: SpecifierSet
    cuda_minor_mismatch_ok: Dict[str, List[str]]
    status: str
    key: Version = field(init=False)

    def __post_init__(self) -> None:
        self.key = Version(self.version)


@dataclass(frozen=True)
class WheelRelease:
    """One torch release's PyPI wheels: the day the first was uploaded and the Pythons per platform."""

    version: Version
    uploaded: str  # YYYY-MM-DD
    pythons: Dict[str, List[str]]  # platform -> CPython versions ("3.12", "3.13t"); a platform absent: no PyPI wheel


@dataclass(frozen=True)
class OtherIndex:
    """Where a platform's wheels lived outside PyPI: `releases` of it are not on PyPI (and unknown here), except
    that before `first_release` none existed anywhere."""

    platform: str
    releases: SpecifierSet
    first_release: Optional[Version]
    status: str


@dataclass
class WheelIndex:
    path: str
    raw: Dict[str, Any]
    releases: List[Release]  # newest first; the releases the planner installs
    drivers: Dict[str, Any]
    deepspeed: List[DeepSpeedRelease]  # newest first
    default_index_base: str
    history: List[Release] = field(default_factory=list)  # older releases: diagnosis only, never planned
    nvcc_sass: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # CUDA "X.Y" -> SASS targets its nvcc emits
    wheels: List[WheelRelease] = field(default_factory=list)  # oldest first
    other_indexes: List[OtherIndex] = field(default_factory=list)
    pypi_unlabelled: Dict[str, str] = field(default_factory=dict)  # "1.3.0" -> "10.1.243": PyPI Linux wheel's CUDA

    def release(self, version: str) -> Optional[Release]:
        """The minor release of a torch version, planned or historical."""
        mm = series(version)
        return next((r for r in (*self.releases, *self.history) if r.version == mm), None)

    @property
    def generated(self) -> str:
        return str(self.raw.get("generated", ""))


def validate(data: Any, source: str) -> List[str]:
    """Every problem in an index document, each as 'FILE: ENTRY: what': the sections against
    wheels-index.schema.json, then each entry, named by its version, and how the entries refer to each other."""
    errs: List[str] = []

    def err(where: str, what: str) -> None:
        errs.append(f"{source}: {where}: {what}")

    if not isinstance(data, dict):
        return [f"{source}: not a wheel index: expected a JSON object"]
    shape = data_schemas.fields(data, FILE_SCHEMA)  # the sections and their types (wheels-index.schema.json)
    for section in shape:
        err(section, _SECTION_SAYS.get(section, f"does not fit {FILE_SCHEMA}")
            if section != "schema" else f"is {data.get('schema')!r}, expected {SCHEMA!r}")
    drivers = data.get("drivers")
    fams: Dict[str, Any] = {}
    tks: Dict[str, Any] = {}
    if "drivers" not in shape:
        fams = drivers.get("families") if isinstance(drivers.get("families"), dict) else {}
        tks = drivers.get("toolkits") if isinstance(drivers.get("toolkits"), dict) else {}
        if not fams:
            err("drivers.families", "missing or empty")
        if not tks:
            err("drivers.toolkits", "missing or empty")
        for fam, row in fams.items():
            where = f"drivers.families[{fam}]"
            if not isinstance(row, dict):
                err(where, "not an object")
                continue
            for osn in ("linux", "windows"):
                if not isinstance(row.get(osn), str) or not _DRIVER.match(row[osn]):
                    err(where, f"{osn}: {row.get(osn)!r} is not a driver version like 525.60.13")
            _check_status(row, where, err)
        for tk, row in tks.items():
            where = f"drivers.toolkits[{tk}]"
            if not re.match(r"^\d+\.\d+$", tk):
                err(where, "key is not a CUDA version like 12.8")
            if not isinstance(row, dict) or not isinstance(row.get("toolkit_ga"), dict):
                err(where, "needs a toolkit_ga object")
                continue
            for osn in ("linux", "windows"):
                val = row["toolkit_ga"].get(osn)
                if val is not None and (not isinstance(val, str) or not _DRIVER.match(val)):
                    err(where, f"toolkit_ga.{osn}: {val!r} is not a driver version or null")
            family = str(major_minor(tk)[0]) if major_minor(tk) else tk
            if family not in fams and row.get("minor_version_compat") is not False:
                err(where, f"no drivers.families entry for CUDA {family}.x (nor minor_version_compat false)")
            if row.get("minor_version_compat") is False and not all(row["toolkit_ga"].get(o) for o in ("linux", "windows")):
                err(where, "minor_version_compat false needs both toolkit_ga drivers (they are its minimum)")
            _check_status(row, where, err)
    torch = data.get("torch") if "torch" not in shape else []
    if "torch" not in shape and not torch:
        err("torch", _SECTION_SAYS["torch"])
    _check_releases(torch, "torch", tks, err)
    _check_releases(data.get("torch_history", []) if "torch_history" not in shape else [], "torch_history", tks, err)
    _check_nvcc(data.get("nvcc_sass", {}) if "nvcc_sass" not in shape else {}, err)
    _check_python_wheels(data.get("python_wheels") if "python_wheels" not in shape else None, err)
    _check_unlabelled(data.get("pypi_unlabelled_linux_x86_64") if "pypi_unlabelled_linux_x86_64" not in shape else None, err)
    ds = data.get("deepspeed")
    if "deepspeed" not in shape:
        for i, rel in enumerate(ds["releases"]):
            where = f"deepspeed.releases[{i}]"
            if not isinstance(rel, dict):
                err(where, "not an object")
                continue
            try:
                if not isinstance(rel.get("version"), str):
                    raise InvalidVersion
                Version(rel["version"])
                where = f"deepspeed.releases[{rel['version']}]"
            except InvalidVersion:
                err(where, f"version {rel.get('version')!r} is not a version")
            try:
                SpecifierSet(str(rel.get("torch", "")))
            except InvalidSpecifier:
                err(where, f"torch {rel.get('torch')!r} is not a version specifier")
            mm = rel.get("cuda_minor_mismatch_ok")
            if not isinstance(mm, dict) or not all(isinstance(v, list) for v in mm.values()):
                err(where, "cuda_minor_mismatch_ok must map a CUDA major to a list of versions")
            _check_status(rel, where, err)
    return errs


def _check_releases(torch: List[Any], key: str, tks: Dict[str, Any], err: Any) -> None:
    seen = set()
    for i, rel in enumerate(torch):
        where = f"{key}[{i}]"
        if not isinstance(rel, dict):
            err(where, "not an object")
            continue
        ver = rel.get("version")
        if not isinstance(ver, str) or not re.match(r"^\d+\.\d+$", ver):
            err(where, f"version {ver!r} is not a minor release like 2.9")
        else:
            where = f"{key}[{ver}]"
            if ver in seen:
                err(where, "listed twice")
            seen.add(ver)
        patch = rel.get("latest_patch")
        if not isinstance(patch, str) or not isinstance(ver, str) or not patch.startswith(f"{ver}."):
            err(where, f"latest_patch {patch!r} is not a patch release of {ver}")
        if rel.get("patch_status") not in STATUSES:
            err(where, f"patch_status {rel.get('patch_status')!r} not one of {', '.join(STATUSES)}")
        for name in ("python", "python_experimental"):
            pys = rel.get(name)
            if not isinstance(pys, list) or (name == "python" and not pys):
                err(where, f"{name} must be a list of versions like 3.12")
                continue
            for p in pys:
                if not isinstance(p, str) or not _PY.match(p):
                    err(where, f"{name}: {p!r} is not a Python version like 3.12 or 3.13t")
        for problem in data_schemas.problems(rel, FILE_SCHEMA, "release_facts"):
            err(where, problem)  # the optional facts (read_from, assumed_from, triton, pins): wheels-index.schema.json
        variants = rel.get("variants")
        if not isinstance(variants, dict) or not variants:
            err(where, "variants missing or empty")
            variants = {}
        for name, var in variants.items():
            _check_variant(var, f"{where}.variants.{name}", name, tks, err)
        pypi = rel.get("pypi_default")
        if not isinstance(pypi, dict):
            err(where, "pypi_default must be an object")
        else:
            for plat, row in pypi.items():
                if plat not in PLATFORMS:
                    err(f"{where}.pypi_default", f"unknown platform {plat!r}")
                named = row.get("variant") if isinstance(row, dict) else None
                if not isinstance(named, str) or named not in variants:
                    err(f"{where}.pypi_default.{plat}", f"names variant {named!r}, which the release lacks"
                        if isinstance(row, dict) else "must be an object with a variant")
        comp = rel.get("companions")
        if not isinstance(comp, dict):
            err(where, "companions must be an object")
        else:
            for name, row in comp.items():
                if not isinstance(row, dict) or not isinstance(row.get("series"), str):
                    err(f"{where}.companions.{name}", "needs a series like 0.24")
                elif row.get("version") is not None and not str(row["version"]).startswith(row["series"] + "."):
                    err(f"{where}.companions.{name}", f"version {row['version']!r} is not in series {row['series']}")


def _check_nvcc(nvcc: Dict[str, Any], err: Any) -> None:
    for cuda, row in nvcc.items():
        where = f"nvcc_sass[{cuda}]"
        if not re.match(r"^\d+\.\d+$", cuda):
            err(where, "key is not a CUDA version like 12.8")
        if not isinstance(row, dict) or not isinstance(row.get("sass"), list) or not row["sass"]:
            err(where, "needs a non-empty sass list")
            continue
        bad = [a for a in row["sass"] if not isinstance(a, str) or not _ARCH.match(a) or not a.startswith("sm_")]
        if bad:
            err(where, f"sass: {bad!r} are not targets like sm_90")
        _check_status(row, where, err)


def _check_unlabelled(table: Any, err: Any) -> None:
    if table is None:
        return
    for i, row in enumerate(table["releases"]):
        where = f"pypi_unlabelled_linux_x86_64.releases[{i}]"
        if not isinstance(row, dict) or not re.match(r"^\d+\.\d+\.\d+$", str(row.get("version"))) \
                or not re.match(r"^\d+\.\d+(\.\d+)?$", str(row.get("cuda"))):
            err(where, "needs a version like 1.3.0 and a CUDA version like 10.1")
            continue
        _check_status(row, where, err)


def _check_python_wheels(pw: Any, err: Any) -> None:
    if pw is None:
        return
    if not isinstance(pw.get("platforms"), list) or not all(isinstance(p, str) for p in pw["platforms"]):
        err("python_wheels.platforms", "must list platform names like linux_x86_64")
        return
    plats = set(pw["platforms"])
    for i, rel in enumerate(pw["releases"]):
        where = f"python_wheels.releases[{i}]"
        if not isinstance(rel, dict):
            err(where, "not an object")
            continue
        if not _is_version(rel.get("version")):
            err(where, f"version {rel.get('version')!r} is not a version")
        if not isinstance(rel.get("uploaded"), str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", rel["uploaded"]):
            err(where, f"uploaded {rel.get('uploaded')!r} is not a date like 2024-10-29")
        pys = rel.get("pythons")
        if not isinstance(pys, dict):
            err(where, "pythons must map a platform to Python versions")
            continue
        for plat, vals in pys.items():
            if plat not in plats:
                err(where, f"unknown platform {plat!r}")
            if not isinstance(vals, list) or not all(isinstance(p, str) and _ANY_PY.match(p) for p in vals):
                err(where, f"pythons.{plat} must list versions like 3.12 or 3.13t")
    others = pw.get("other_indexes") or []
    if not isinstance(others, list):
        err("python_wheels.other_indexes", "must be a list")
        return
    for i, row in enumerate(others):
        where = f"python_wheels.other_indexes[{i}]"
        if not isinstance(row, dict) or not isinstance(row.get("platform"), str) or row["platform"] not in plats:
            err(where, "needs a known platform")
            continue
        try:
            SpecifierSet(str(row.get("releases", "")))
        except InvalidSpecifier:
            err(where, f"releases {row.get('releases')!r} is not a version specifier")
        if row.get("first_release") is not None and not _is_version(row["first_release"]):
            err(where, f"first_release {row['first_release']!r} is not a version")
        _check_status(row, where, err)


def _is_version(value: Any) -> bool:
    """A version string (PEP 440); a number is not one: `Version(1.0)` fails where `Version(str(1.0))` passes."""
    if not isinstance(value, str):
        return False
    try:
        Version(value)
    except InvalidVersion:
        return False
    return True


def _check_status(row: Dict[str, Any], where: str, err: Any) -> None:
    if row.get("status") not in STATUSES:
        err(where, f"status {row.get('status')!r} not one of {', '.join(STATUSES)}")


def _check_variant(var: Any, where: str, name: str, tks: Dict[str, Any], err: Any) -> None:
    if not isinstance(var, dict):
        err(where, "not an object")
        return
    kind = var.get("kind")
    if kind not in KINDS:
        err(where, f"kind {kind!r} not one of {', '.join(KINDS)}")
        return
    if not _VARIANT[kind].match(name):
        err(where, f"name does not fit kind {kind}")
    _check_status(var, where, err)
    if kind == "cuda":
        cuda = var.get("cuda")
        expect = f"{int(name[2:-1])}.{name[-1]}" if _VARIANT["cuda"].match(name) else None
        if cuda != expect:
            err(where, f"cuda {cuda!r} does not match the variant name (expected {expect!r})")
        elif cuda not in tks:
            err(where, f"no drivers.toolkits entry for CUDA {cuda}")
    plats = var.get("platforms")
    if not isinstance(plats, dict) or not plats:
        err(where, "platforms missing or empty")
        return
    for plat, row in plats.items():
        pw = f"{where}.platforms.{plat}"
        if plat not in PLATFORMS:
            err(pw, f"unknown platform (known: {', '.join(PLATFORMS)})")
        if not isinstance(row, dict):
            err(pw, "not an object")
            continue
        _check_status(row, pw, err)
        if kind == "cuda":
            if not isinstance(row.get("sm"), list) or not isinstance(row.get("ptx"), list):
                err(pw, "needs sm and ptx lists")
                continue
            for key in ("sm", "ptx", "sm_unverified", "ptx_unverified"):
                if not isinstance(row.get(key) or [], list):
                    err(pw, f"{key} must be a list")
                    continue
                for a in row.get(key) or []:
                    prefix = "sm_" if key.startswith("sm") else "compute_"
                    if not isinstance(a, str) or not _ARCH.match(a) or not a.startswith(prefix):
                        err(pw, f"{key}: {a!r} is not an arch like {prefix}90")


def _releases(rows: List[Dict[str, Any]]) -> List[Release]:
    releases = []
    for rel in rows:
        variants = {
            name: Variant(release=rel["version"], name=name, kind=v["kind"], cuda=v.get("cuda"), status=v["status"],
                          platforms=v["platforms"], cudnn=v.get("cudnn"), nccl=v.get("nccl"), note=v.get("note"),
                          assumed_from=v.get("assumed_from"),
                          listed=v["status"] != "assumed" or bool(v.get("listed_on") or v.get("pins_read_from")))
            for name, v in rel["variants"].items()
        }
        releases.append(Release(
            version=rel["version"], latest_patch=rel["latest_patch"], patch_status=rel["patch_status"],
            python=list(rel["python"]), python_experimental=list(rel.get("python_experimental") or []),
            pypi_default={p: row["variant"] for p, row in rel["pypi_default"].items()},
            variants=variants, companions=dict(rel.get("companions") or {}),
        ))
    releases.sort(key=lambda r: r.key, reverse=True)
    return releases


def _build(data: Dict[str, Any], source: str) -> WheelIndex:
    pw = data.get("python_wheels") or {}
    wheels = sorted((WheelRelease(Version(r["version"]), r["uploaded"], {p: list(v) for p, v in r["pythons"].items()})
                     for r in pw.get("releases") or []), key=lambda w: w.version)
    others = [OtherIndex(r["platform"], SpecifierSet(r.get("releases") or ""),
                         Version(r["first_release"]) if r.get("first_release") else None, r["status"])
              for r in pw.get("other_indexes") or []]
    ds = [DeepSpeedRelease(version=r["version"], torch=SpecifierSet(r.get("torch") or ""),
                           cuda_minor_mismatch_ok={k: list(v) for k, v in r["cuda_minor_mismatch_ok"].items()},
                           status=r["status"]) for r in data["deepspeed"]["releases"]]
    ds.sort(key=lambda r: r.key, reverse=True)
    return WheelIndex(path=source, raw=data, releases=_releases(data["torch"]), drivers=data["drivers"], deepspeed=ds,
                      default_index_base=data["default_index_base"], history=_releases(data.get("torch_history") or []),
                      nvcc_sass={k: tuple(v["sass"]) for k, v in (data.get("nvcc_sass") or {}).items()},
                      wheels=wheels, other_indexes=others,
                      pypi_unlabelled={r["version"]: r["cuda"] for r in
                                       (data.get("pypi_unlabelled_linux_x86_64") or {}).get("releases") or []})


def parse_index(data: Any, source: str) -> WheelIndex:
    """Validate a decoded document; raise InputError listing every problem."""
    errors = validate(data, source)
    if errors:
        raise InputError(f"invalid wheel index ({len(errors)} problem{'s' if len(errors) > 1 else ''}): " + "; ".join(errors))
    return _build(data, source)


def read_index(path: Path, cache: ValidationCache = NO_CACHE) -> WheelIndex:
    """The wheel index in `path`, validated (`cache`: unless these exact bytes already passed in an earlier run)."""
    try:
        raw = read_bytes(path)
    except OSError as exc:
        raise InputError(f"wheel index {path}: cannot read: {exc.strerror or exc}") from None
    data, error = decode_json(path, raw)
    if error:
        raise InputError(f"wheel index {error}")
    key = fingerprint("wheel-index", [("index", raw)])
    if cache.passed(key):
        return _build(data, str(path))
    index = parse_index(data, str(path))
    cache.remember(key)
    return index


_CACHE: Dict[Tuple[Tuple[str, int, int], ...], WheelIndex] = {}


def _cached(path: Path, cache: ValidationCache) -> WheelIndex:
    key = files_key([path])
    if key not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.clear()
        _CACHE[key] = read_index(path, cache)
    return _CACHE[key]


def load_index(path: Optional[Path] = None, cache: ValidationCache = NO_CACHE) -> WheelIndex:
    """The wheel index in `path` (default: the bundled copy), validated; cached while the file is unchanged
    (`cache`: and across runs, what already passed)."""
    return _cached(Path(path) if path is not None else bundled_path(), cache)

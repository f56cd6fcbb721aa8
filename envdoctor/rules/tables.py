"""Compatibility tables (`rules/tables/*.json`): each fact once, with its source, validated on load against
`envdoctor/data/tables.schema.json`. `load_tables` is the one way they are read: the result travels in the
Knowledge value, and every predicate reads it from its context (`ctx.tables`), never from disk.

Machine rules read them through their predicates; NCCL signature files refer to them by name
(`{"table": "nccl_min_for_gpu.blackwell"}` as a condition value, `{table:nccl_min_for_gpu.blackwell}`
in text), resolved when the files are loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envdoctor import data_schemas
from envdoctor.compat import parse_cc
from envdoctor.data_files import read_json
from envdoctor.errors import InputError
from envdoctor.snapshot import distribution_key as canonicalize_name
from envdoctor.wheels.release_files import ReleaseBuilds  # PEP 503, without importing packaging.tags

_MINOR = re.compile(r"^\d+\.\d+$")
TEXT_REF = re.compile(r"\{table:([a-z_]+)\.([a-z0-9_]+)\}")


@dataclass(frozen=True)
class NcclFloor:
    """The oldest NCCL release that supports a GPU generation."""

    key: str  # "hopper", "blackwell": how signature files name the row
    generation: str
    min_cc: str  # the generation's lowest compute capability
    nccl: str
    source: str


@dataclass(frozen=True)
class NcclFeature:
    """The oldest NCCL release with a feature (WSL2 support, nvidia_peermem detection)."""

    key: str
    feature: str
    nccl: str
    source: str


@dataclass(frozen=True)
class ArchFloor:
    """The lowest compute capability an extension's kernels run on (extension_requirements.json)."""

    extension: str
    versions: SpecifierSet
    min_cc: Tuple[int, int]
    what: str
    source: str


@dataclass(frozen=True)
class EcosystemTables:
    torchvision: Mapping[str, str]  # torch "X.Y" -> torchvision "0.Z"
    torchaudio: Mapping[str, str]
    torchvision_offset_2x: int
    arch_floors: Tuple[ArchFloor, ...]


@dataclass(frozen=True)
class NumpyBuild:
    """The NumPy range the torch wheels of `torch` (optionally on one OS and Python X.Y) run with."""

    torch: SpecifierSet
    os: Optional[str]
    python: Optional[str]
    numpy: SpecifierSet
    source: str


@dataclass(frozen=True)
class Meaning:
    """What an error text of torch, CUDA or DeepSpeed means (runtime_errors.json)."""

    kind: str
    key: str
    pattern: re.Pattern[str]
    cause: str
    fix: str
    source: str


@dataclass(frozen=True)
class TorchAbi:
    """The C++ ABI of PyTorch's own Linux x86_64 binaries for a range of torch releases (torch_cxx11_abi.json)."""

    torch: SpecifierSet
    variants: Tuple[str, ...]  # the CUDA variants ('cu126') or 'cpu' the row holds for; () for all
    cxx11_abi: bool
    source: str


@dataclass(frozen=True)
class DynamoPython:
    """The first Python X.Y that torch.compile (Dynamo) refuses in a range of torch releases (dynamo_python.json)."""

    torch: SpecifierSet
    python_below: Tuple[int, int]
    said: str
    source: str

    @property
    def torch_from(self) -> Optional[str]:
        """The oldest torch release of the range ('2.4' for '>=2.4,<2.6'), when the range names one."""
        return next((sp.version for sp in self.torch if sp.operator == ">="), None)


@dataclass(frozen=True)
class GpuPeak:
    """A GPU model's dense tensor-core peaks in TFLOP/s, by dtype (gpu_peaks.json)."""

    pattern: re.Pattern[str]  # searched in the device name
    model: str
    tflops: Mapping[str, float]  # "bfloat16" | "float16" | "tf32" | "float32" -> TFLOP/s
    source: str


@dataclass(frozen=True)
class Tables:
    triton_pins: Mapping[str, str]  # torch "X.Y" -> the triton "X.Y" its wheels pin
    nccl_min_for_gpu: Tuple[NcclFloor, ...]  # newest generation first
    nccl_min_for_feature: Mapping[str, NcclFeature]
    shm_min_mib: int  # /dev/shm any multi-GPU machine needs
    shm_per_gpu_mib: int  # and this much more per local GPU
    ecosystem: EcosystemTables  # companions.json and extension_requirements.json
    numpy_builds: Tuple[NumpyBuild, ...]
    runtime_errors: Tuple[Meaning, ...]
    dynamo_python: Tuple[DynamoPython, ...] = ()  # oldest torch range first
    torch_cxx11_abi: Tuple[TorchAbi, ...] = ()  # in file order: the first matching row wins

    def torch_abi(self, version: str, variant: Optional[str]) -> Optional[TorchAbi]:
        """The row that says which C++ ABI PyTorch's binaries of torch `version` (its variant, when known) use."""
        return next((r for r in self.torch_cxx11_abi if r.torch.contains(version, prereleases=True)
                     and (not r.variants or variant in r.variants)), None)
    gpu_peaks: Tuple[GpuPeak, ...] = ()  # the first whose pattern a device name contains applies
    extension_wheels: Tuple[ReleaseBuilds, ...] = ()  # oldest release first, per extension

    def peak_for(self, device_name: str) -> Optional[GpuPeak]:
        """The gpu_peaks.json row of a device ('NVIDIA H100 80GB HBM3' -> H100 SXM); None when not listed."""
        return next((p for p in self.gpu_peaks if p.pattern.search(device_name)), None)

    def meaning(self, kind: str, text: str, key: Optional[str] = None) -> Optional[Meaning]:
        """The first row of runtime_errors.json of `kind` (and `key`, when given) whose pattern occurs in `text`."""
        return next((m for m in self.runtime_errors if m.kind == kind and (key is None or m.key == key)
                     and m.pattern.search(text)), None)

    def lookup(self, ref: str) -> str:
        """'nccl_min_for_gpu.blackwell' -> '2.26'; 'triton_pins.2.5' -> '3.1'. KeyError names what is missing."""
        table, _, key = ref.partition(".")
        if table == "nccl_min_for_gpu":
            row = next((r for r in self.nccl_min_for_gpu if r.key == key), None)
            if row is not None:
                return row.nccl
        elif table == "nccl_min_for_feature" and key in self.nccl_min_for_feature:
            return self.nccl_min_for_feature[key].nccl
        elif table == "triton_pins" and key in self.triton_pins:
            return self.triton_pins[key]
        raise KeyError(f"no table entry {ref!r}")

    @staticmethod
    def references(value: Any) -> List[str]:
        """The table entries a rule file's entry names ('nccl_min_for_gpu.hopper'), before they are resolved."""
        if isinstance(value, str):
            return [f"{m.group(1)}.{m.group(2)}" for m in TEXT_REF.finditer(value)]
        if isinstance(value, dict):
            if set(value) == {"table"} and isinstance(value["table"], str):
                return [value["table"]]
            return [r for v in value.values() for r in Tables.references(v)]
        if isinstance(value, list):
            return [r for v in value for r in Tables.references(v)]
        return []

    def fill(self, text: str) -> str:
        return TEXT_REF.sub(lambda m: self.lookup(f"{m.group(1)}.{m.group(2)}"), text)

    def resolve(self, value: Any, problems: List[str]) -> Any:
        """A rule file's entry with its table references replaced: `{"table": "t.key"}` as a value and
        `{table:t.key}` in text. An unknown reference is added to `problems`."""
        try:
            if isinstance(value, str):
                return self.fill(value)
            if isinstance(value, dict):
                if set(value) == {"table"} and isinstance(value["table"], str):
                    return self.lookup(value["table"])
                return {k: self.resolve(v, problems) for k, v in value.items()}
            if isinstance(value, list):
                return [self.resolve(v, problems) for v in value]
        except KeyError as exc:
            problems.append(str(exc.args[0]))
        return value


SCHEMA = "tables.schema.json"  # envdoctor/data/: one definition per table file, one per row


def _doc(path: Path) -> Tuple[Any, List[str]]:
    """The table's document and what is wrong with its shape outside its rows (each row is checked on its own,
    so that a bad row is named once, with its fields)."""
    doc, error = read_json(path)
    if error:
        return None, [error]
    problems = data_schemas.problems(doc, SCHEMA, path.stem, str(path), skip=("rows[", "pins."))
    return (doc if isinstance(doc, dict) else None), problems


def _good_rows(path: Path, doc: Any, row: str, problems: List[str]) -> List[Tuple[str, Dict[str, Any]]]:
    rows = doc.get("rows") if isinstance(doc, dict) else None
    out = []
    for i, entry in enumerate(rows if isinstance(rows, list) else []):
        where = f"{path}: rows[{i}]"
        bad = data_schemas.fields(entry, SCHEMA, row)
        if bad == ["(entry)"]:
            problems.append(f"{where}: must be an object")
        elif bad:
            problems.append(f"{where}: bad or missing {', '.join(bad)}")
        else:
            out.append((where, entry))
    return out


def _triton_pins(path: Path) -> Tuple[Mapping[str, str], List[str]]:
    doc, problems = _doc(path)
    pins = doc.get("pins") if isinstance(doc, dict) else None
    out = {}
    for torch_mm, row in (pins if isinstance(pins, dict) else {}).items():
        if not _MINOR.match(torch_mm) or data_schemas.fields(row, SCHEMA, "triton_pin"):
            problems.append(f"{path}: pins.{torch_mm}: needs a torch 'X.Y' key, a triton 'X.Y' value and a source")
            continue
        out[torch_mm] = row["triton"]
    return MappingProxyType(out), problems


def _nccl_floors(path: Path) -> Tuple[Tuple[NcclFloor, ...], List[str]]:
    doc, problems = _doc(path)
    out = [NcclFloor(r["key"], r["generation"], r["min_cc"], r["nccl"], r["source"])
           for _, r in _good_rows(path, doc, "nccl_floor", problems)]
    out.sort(key=lambda r: parse_cc(r.min_cc), reverse=True)
    return tuple(out), problems


def _nccl_features(path: Path) -> Tuple[Mapping[str, NcclFeature], List[str]]:
    doc, problems = _doc(path)
    out = {r["key"]: NcclFeature(r["key"], r["feature"], r["nccl"], r["source"])
           for _, r in _good_rows(path, doc, "nccl_feature", problems)}
    return MappingProxyType(out), problems


def _shm(path: Path) -> Tuple[Tuple[int, int], List[str]]:
    doc, problems = _doc(path)
    if problems or doc is None:
        return (0, 0), problems
    return (doc["min_mib"], doc["per_gpu_mib"]), []


def _cc(text: Any) -> Optional[Tuple[int, int]]:
    """'8.6' -> (8, 6); anything else None (the companion maps' keys are torch X.Y, read the same way)."""
    try:
        return parse_cc(text) if isinstance(text, str) else None
    except ValueError:
        return None


def parse_ecosystem_tables(companions: Any, requirements: Any, where: str) -> EcosystemTables:
    """The companion series and the extensions' compute-capability floors from their two documents (`where`
    is the directory they came from); InputError lists every problem."""
    tables, problems = _parse_ecosystem(companions, requirements, where)
    if problems:
        raise InputError("invalid ecosystem tables: " + "; ".join(problems))
    return tables


def _parse_ecosystem(companions: Any, requirements: Any, where: str) -> Tuple[EcosystemTables, List[str]]:
    comp_path, req_path = Path(where) / "companions.json", Path(where) / "extension_requirements.json"
    problems = data_schemas.problems(companions, SCHEMA, "companions", str(comp_path))
    if not isinstance(companions, dict):
        companions = {}
    maps: Dict[str, Dict[str, str]] = {}
    for name in ("torchvision", "torchaudio"):
        rows = companions.get(name)
        rows = rows if isinstance(rows, dict) else {}
        if not all(_cc(k) for k in rows):
            problems.append(f"{comp_path}: '{name}' maps torch 'X.Y' to '{name}' 'X.Y'")
        maps[name] = {k: v for k, v in rows.items() if _cc(k) and isinstance(v, str)}
    offset = companions.get("torchvision_offset_2x")
    problems += data_schemas.problems(requirements, SCHEMA, "extension_requirements", str(req_path), skip=("rows[",))
    floors: List[ArchFloor] = []
    for at, row in _good_rows(req_path, requirements, "extension_floor", problems):
        try:
            spec = SpecifierSet(row["versions"])
        except InvalidSpecifier:
            problems.append(f"{at}: versions {row['versions']!r} is not a specifier")
            continue
        floors.append(ArchFloor(canonicalize_name(row["extension"]), spec, _cc(row["min_cc"]) or (0, 0),
                                row["what"], row["source"]))
    offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    return EcosystemTables(maps["torchvision"], maps["torchaudio"], offset, tuple(floors)), problems


def _numpy_builds(path: Path) -> Tuple[Tuple[NumpyBuild, ...], List[str]]:
    doc, problems = _doc(path)
    out = []
    for at, row in _good_rows(path, doc, "numpy_build", problems):
        try:
            out.append(NumpyBuild(SpecifierSet(row["torch"]), row.get("os"), row.get("python"),
                                  SpecifierSet(row["numpy"]), row["source"]))
        except InvalidSpecifier:
            problems.append(f"{at}: needs torch and numpy specifiers, an https source, optional os and python")
    return tuple(out), problems


def _runtime_errors(path: Path) -> Tuple[Tuple[Meaning, ...], List[str]]:
    doc, problems = _doc(path)
    out = []
    for at, row in _good_rows(path, doc, "runtime_error", problems):
        try:
            pattern = re.compile(row["pattern"])
        except re.error as exc:
            problems.append(f"{at}: pattern does not compile: {exc}")
            continue
        out.append(Meaning(row["kind"], row["key"], pattern, row["cause"], row["fix"], row["source"]))
    return tuple(out), problems


def _torch_spec(at: str, row: Dict[str, Any], problems: List[str]) -> Optional[SpecifierSet]:
    """A row's `torch` range; None (and the problem said) when it is no specifier."""
    try:
        return SpecifierSet(row["torch"])
    except InvalidSpecifier:
        problems.append(f"{at}: torch {row['torch']!r} is not a specifier")
        return None


def _dynamo_python(path: Path) -> Tuple[Tuple[DynamoPython, ...], List[str]]:
    doc, problems = _doc(path)
    out = []
    for at, row in _good_rows(path, doc, "dynamo_python_row", problems):
        spec = _torch_spec(at, row, problems)
        if spec is None:
            continue
        major, minor = (int(p) for p in row["python_below"].split("."))
        out.append(DynamoPython(spec, (major, minor), row["said"], row["source"]))
    out.sort(key=lambda r: r.python_below)
    return tuple(out), problems


def _torch_cxx11_abi(path: Path) -> Tuple[Tuple[TorchAbi, ...], List[str]]:
    if not path.exists():  # an older rules database without the table: no ABI known
        return (), []
    doc, problems = _doc(path)
    out = []
    for at, row in _good_rows(path, doc, "torch_cxx11_abi_row", problems):
        spec = _torch_spec(at, row, problems)
        if spec is None:
            continue
        out.append(TorchAbi(spec, tuple(row.get("variants") or ()), bool(row["cxx11_abi"]), row["source"]))
    return tuple(out), problems


FILE_FIELDS = frozenset({"release", "cuda", "torch", "abi", "py", "platform"})  # what a release file's URL names
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _extension_wheels(path: Path) -> Tuple[Tuple[ReleaseBuilds, ...], List[str]]:
    if not path.exists():  # an older rules database without the table: no release files known
        return (), []
    doc, problems = _doc(path)
    files = doc.get("files") if isinstance(doc, dict) else None
    urls: Dict[str, str] = {}
    for name, entry in (files if isinstance(files, dict) else {}).items():
        bad = data_schemas.fields(entry, SCHEMA, "extension_wheel_file")
        if bad:
            problems.append(f"{path}: files.{name}: bad or missing {', '.join(bad)}")
            continue
        unknown = sorted(set(_PLACEHOLDER.findall(entry["url"])) - FILE_FIELDS)
        if unknown:
            problems.append(f"{path}: files.{name}: url names {', '.join('{' + u + '}' for u in unknown)}; it may name "
                            f"{', '.join('{' + f + '}' for f in sorted(FILE_FIELDS))}")
            continue
        urls[name] = entry["url"]
    out = []
    seen = set()
    for at, row in _good_rows(path, doc, "extension_wheel_row", problems):
        url = urls.get(row["extension"])
        if url is None:
            problems.append(f"{at}: no files.{row['extension']} says where its files are")
            continue
        if (row["extension"], row["release"]) in seen:
            problems.append(f"{at}: {row['extension']} {row['release']} has a row already")
            continue
        seen.add((row["extension"], row["release"]))
        try:
            Version(row["release"])
        except InvalidVersion:
            problems.append(f"{at}: release {row['release']!r} is no version")
            continue
        out.append(ReleaseBuilds(row["extension"], row["release"], tuple(row["torch"]),
                                 MappingProxyType(dict(row["cuda"])), tuple(row["python"]), tuple(row["cxx11_abi"]),
                                 tuple(row["platforms"]), tuple(MappingProxyType(dict(e)) for e in row.get("exclude", ())),
                                 row["glibc"], url, row["source"]))
    out.sort(key=lambda r: (r.extension, Version(r.release)))
    return tuple(out), problems


def _gpu_peaks(path: Path) -> Tuple[Tuple[GpuPeak, ...], List[str]]:
    if not path.exists():  # an older rules database without the table: no peaks known
        return (), []
    doc, problems = _doc(path)
    out = []
    for at, row in _good_rows(path, doc, "gpu_peak_row", problems):
        try:
            pattern = re.compile(row["match"])
        except re.error as exc:
            problems.append(f"{at}: match {row['match']!r} does not compile: {exc}")
            continue
        rates = {k: float(row[k]) for k in ("bfloat16", "float16", "tf32", "float32") if k in row}
        out.append(GpuPeak(pattern, row["model"], MappingProxyType(rates), row["source"]))
    return tuple(out), problems


def _ecosystem(directory: Path) -> Tuple[EcosystemTables, List[str]]:
    docs, problems = [], []
    for name in ("companions.json", "extension_requirements.json"):
        doc, error = read_json(directory / name)
        problems += [error] if error else []
        docs.append(doc)
    if problems:
        return EcosystemTables({}, {}, 0, ()), problems
    return _parse_ecosystem(docs[0], docs[1], str(directory))


def load_tables(directory: Path) -> Tables:
    """Read and check every table in `directory` (a rules database's `tables/`): the shape against
    tables.schema.json, then what a schema cannot say. InputError lists every problem of every table."""
    pins, p1 = _triton_pins(directory / "triton_pins.json")
    floors, p2 = _nccl_floors(directory / "nccl_min_for_gpu.json")
    features, p3 = _nccl_features(directory / "nccl_min_for_feature.json")
    (shm_min, shm_per_gpu), p4 = _shm(directory / "shm.json")
    ecosystem, p5 = _ecosystem(directory)
    numpy_builds, p6 = _numpy_builds(directory / "numpy_builds.json")
    runtime_errors, p7 = _runtime_errors(directory / "runtime_errors.json")
    dynamo_python, p8 = _dynamo_python(directory / "dynamo_python.json")
    torch_abi, p9 = _torch_cxx11_abi(directory / "torch_cxx11_abi.json")
    gpu_peaks, p10 = _gpu_peaks(directory / "gpu_peaks.json")
    extension_wheels, p11 = _extension_wheels(directory / "extension_wheels.json")
    problems = p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9 + p10 + p11
    if problems:
        raise InputError("invalid compatibility tables: " + "; ".join(problems))
    return Tables(triton_pins=pins, nccl_min_for_gpu=floors, nccl_min_for_feature=features,
                  shm_min_mib=shm_min, shm_per_gpu_mib=shm_per_gpu, ecosystem=ecosystem,
                  numpy_builds=numpy_builds, runtime_errors=runtime_errors, dynamo_python=dynamo_python,
                  torch_cxx11_abi=torch_abi, gpu_peaks=gpu_peaks, extension_wheels=extension_wheels)

"""The machine snapshot: a typed model of `snapshot.schema.json` with a lossless JSON round-trip.

A probed field holds a value, `Unavailable(why)` (known not to exist), `ProbeFailed(error)` or
`Unknown(why)` (both unknown). JSON keeps the schema's names: every marker is written as null, and its
reason goes to the top-level `absent` map (path -> "unavailable: why" / "failed: error" / "unknown: why");
a bare null (no reason) is an unknown that was not reported. Reading the file back restores them.
Keys this model does not know are kept in `extra` and written back unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, TypeVar, Union

from envdoctor.errors import SnapshotError

SCHEMA = "envdoctor.snapshot/1"

T = TypeVar("T")


class _Marker:
    """What markers share: a field of a section that is not there is not there for the same reason
    (`snapshot.host.os` is the host's marker when the host is unknown), as the condition paths read."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return self


@dataclass(frozen=True)
class Unavailable(_Marker):
    """The fact does not exist here (no driver, not Linux, NotSupported by this GPU)."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"not available ({self.reason})"


@dataclass(frozen=True)
class ProbeFailed(_Marker):
    """The probe that should have read the fact failed."""

    error: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"probe failed ({self.error})"


@dataclass(frozen=True)
class Unknown(_Marker):
    """Nobody knows the fact: not probed, or not stated in a report. Neither present nor absent."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


Absent = Union[Unavailable, ProbeFailed, Unknown]
NOT_PROBED = Unknown("not probed")
NOT_REPORTED = Unknown("not reported")  # a bare null in a snapshot file


Field = Union[T, Unavailable, ProbeFailed, Unknown]


def is_absent(value: object) -> bool:
    """Any marker: the value is not there (known not to exist, or unknown)."""
    return isinstance(value, (Unavailable, ProbeFailed, Unknown))


def is_unknown(value: object) -> bool:
    """Nobody knows the value: not probed, not reported, or the probe failed."""
    return isinstance(value, (Unknown, ProbeFailed))


def is_unavailable(value: object) -> bool:
    """Known not to exist here."""
    return isinstance(value, Unavailable)


def present(value: Any) -> bool:
    return value is not None and not is_absent(value)


def value_or(value: Any, default: Any = None) -> Any:
    return default if is_absent(value) or value is None else value


def known_list(value: Any) -> list:
    """A list field's items, or [] when the list itself is unknown or unavailable (check that apart)."""
    return value if isinstance(value, list) else []


def _absent_field(default: Absent = NOT_PROBED) -> Any:
    return field(default=default)


# Fields added after a snapshot format was first written: a document without them still loads
# (they read as unknown) and is written back without them.
NOT_RECORDED = ProbeFailed("not recorded in this snapshot")


def _optional_field() -> Any:
    return field(default=NOT_RECORDED)


@dataclass
class Model:
    extra: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self, absent: Optional[Dict[str, str]] = None, path: str = "") -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            if getattr(self, f.name) is NOT_RECORDED:
                continue
            out[f.name] = _dump(getattr(self, f.name), absent, _join(path, f.name))
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out

    @classmethod
    def from_json(cls, data: Dict[str, Any], absent: Dict[str, str], path: str = "") -> Any:
        hints = _hints(cls)
        kwargs: Dict[str, Any] = {}
        known = set()
        for f in dataclasses.fields(cls):
            if f.name == "extra":
                continue
            known.add(f.name)
            if f.name in data:
                kwargs[f.name] = _load(hints[f.name], data[f.name], absent, _join(path, f.name))
            elif _join(path, f.name) in absent:
                kwargs[f.name] = _marker(absent[_join(path, f.name)])
        obj = cls(**kwargs)
        obj.extra = {k: v for k, v in data.items() if k not in known}
        return obj


def _join(path: str, name: Union[str, int]) -> str:
    return f"{path}.{name}" if path else str(name)


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _marker(text: str) -> Absent:
    kind, _, why = text.partition(": ")
    if kind == "failed":
        return ProbeFailed(why)
    if kind == "unknown":
        return Unknown(why) if why else NOT_REPORTED
    return Unavailable(why or kind)


def _dump(value: Any, absent: Optional[Dict[str, str]], path: str) -> Any:
    if isinstance(value, Unavailable):
        if absent is not None:
            absent[path] = f"unavailable: {value.reason}"
        return None
    if isinstance(value, ProbeFailed):
        if absent is not None:
            absent[path] = f"failed: {value.error}"
        return None
    if isinstance(value, Unknown):
        if absent is not None and value != NOT_REPORTED:
            absent[path] = f"unknown: {value.reason}"
        return None
    if isinstance(value, Model):
        return value.to_json(absent, path)
    if isinstance(value, list):
        return [_dump(v, absent, _join(path, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _dump(v, absent, _join(path, k)) for k, v in value.items()}
    return value


def _strip_markers(tp: Any) -> Any:
    if typing.get_origin(tp) is Union:
        args = [a for a in typing.get_args(tp) if a not in (Unavailable, ProbeFailed, Unknown, type(None))]
        return args[0] if len(args) == 1 else Union[tuple(args)]
    return tp


def _load(tp: Any, value: Any, absent: Dict[str, str], path: str) -> Any:
    if value is None:
        if path in absent:
            return _marker(absent[path])
        if typing.get_origin(tp) is Union and type(None) in typing.get_args(tp):
            return None  # a plain Optional: None is a value ("no error")
        return NOT_REPORTED
    tp = _strip_markers(tp)
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, Model):
        return tp.from_json(value, absent, path)
    if origin in (list, List):
        (item,) = typing.get_args(tp) or (Any,)
        return [_load(item, v, absent, _join(path, i)) for i, v in enumerate(value)]
    if origin in (dict, Dict):
        args = typing.get_args(tp)
        item = args[1] if args else Any
        return {k: _load(item, v, absent, _join(path, k)) for k, v in value.items()}
    return value


# --- the sections ---------------------------------------------------------------------------


@dataclass
class Cpu(Model):
    model: Field[str] = _absent_field()
    physical_cores: Field[int] = _absent_field()
    logical_cpus: Field[int] = _absent_field()
    sockets: Field[int] = _absent_field()


@dataclass
class NumaNode(Model):
    id: int = 0
    cpus: Field[str] = _absent_field()
    memory_bytes: Field[int] = _absent_field()


@dataclass
class Host(Model):
    os: str = "other"
    arch: str = "unknown"
    hostname: Field[str] = _absent_field()
    kernel: Field[str] = _absent_field()
    distro: Field[str] = _absent_field()
    glibc: Field[str] = _absent_field()
    container: Field[str] = _absent_field()
    wsl: Field[bool] = _absent_field()
    cpu: Field[Cpu] = _absent_field()
    memory_bytes: Field[int] = _absent_field()
    shm_bytes: Field[int] = _absent_field()
    numa_nodes: Field[List[NumaNode]] = _absent_field()
    iommu: Field[str] = _absent_field()
    acs_enabled_bridges: Field[int] = _absent_field()
    container_gpu_access: Field[bool] = _absent_field()
    gpu_device_nodes: Field[List[str]] = _absent_field()
    process_cpus: Field[str] = _absent_field()


@dataclass
class Driver(Model):
    version: str = ""
    cuda_driver_version: Field[str] = _absent_field()
    source: Field[str] = _absent_field()


@dataclass
class Pcie(Model):
    gen: Field[int] = _absent_field()
    max_gen: Field[int] = _absent_field()
    width: Field[int] = _absent_field()
    max_width: Field[int] = _absent_field()


@dataclass
class NvLink(Model):
    links_active: Field[int] = _absent_field()
    version: Field[int] = _absent_field()


@dataclass
class Gpu(Model):
    index: int = 0
    name: Field[str] = _absent_field()
    compute_capability: Field[str] = _absent_field()
    uuid: Field[str] = _absent_field()
    pci_bus_id: Field[str] = _absent_field()
    memory_bytes: Field[int] = _absent_field()
    numa_node: Field[int] = _absent_field()
    cpu_affinity: Field[str] = _absent_field()
    pcie: Field[Pcie] = _absent_field()
    nvlink: Field[NvLink] = _absent_field()
    mig_enabled: Field[bool] = _absent_field()
    persistence_mode: Field[bool] = _absent_field()
    ecc_uncorrected: Field[int] = _absent_field()
    retired_pages_pending: Field[bool] = _absent_field()

    @property
    def sm(self) -> int:
        """10 * major + minor; ValueError when the compute capability is not known."""
        if not isinstance(self.compute_capability, str):
            raise ValueError(f"GPU {self.index}: compute capability {self.compute_capability}")
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)


@dataclass
class Topology(Model):
    links: List[List[str]] = field(default_factory=list)
    p2p: Field[List[List[Optional[bool]]]] = _absent_field()


@dataclass
class CudaToolkit(Model):
    nvcc_version: Field[str] = _absent_field()
    cuda_home: Field[str] = _absent_field()
    nvcc_path: Field[str] = _absent_field()


@dataclass
class LibCopy(Model):
    version: Field[str] = _absent_field()
    path: Field[str] = _absent_field()


@dataclass
class Libraries(Model):
    cudnn: Field[List[LibCopy]] = _absent_field()
    nccl: Field[List[LibCopy]] = _absent_field()
    cudart: Field[List[LibCopy]] = _absent_field()
    cublas: Field[List[LibCopy]] = _absent_field()


@dataclass
class PythonEnv(Model):
    version: str = ""
    implementation: Field[str] = _absent_field()
    executable: Field[str] = _absent_field()
    env_kind: Field[str] = _absent_field()
    externally_managed: Field[bool] = _absent_field()
    packages: Field[Dict[str, str]] = _absent_field()
    python_headers: Field[bool] = _absent_field()
    free_threaded: Field[bool] = _optional_field()
    pointer_bits: Field[int] = _optional_field()
    interrupted_fix: Field[str] = _optional_field()  # what envdoctor's fix journal says was interrupted here


@dataclass
class TorchOrigin(Model):
    """Where `import torch` finds torch, and whether that is inside the environment's site-packages."""

    file: Field[str] = _absent_field()
    kind: Field[str] = _absent_field()
    outside_site_packages: Field[bool] = _absent_field()
    site_packages: Field[List[str]] = _absent_field()
    dist_location: Field[str] = _absent_field()


@dataclass
class NumpyBridge(Model):
    version: Field[str] = _absent_field()
    works: Field[bool] = _absent_field()
    error: Optional[str] = None


@dataclass
class Companion(Model):
    """torchvision / torchaudio, imported after torch in the same process."""

    version: Field[str] = _absent_field()
    requires_torch: Field[str] = _absent_field()
    importable: Field[bool] = _absent_field()
    error: Optional[str] = None
    nms_op: Field[bool] = _absent_field()
    warnings: Field[List[str]] = _absent_field()


@dataclass
class NvidiaWheel(Model):
    required: Field[str] = _absent_field()
    installed: Field[str] = _absent_field()


@dataclass
class MappedLibrary(Model):
    path: str = ""
    file_version: Field[str] = _absent_field()
    dist: Field[str] = _absent_field()
    dist_version: Field[str] = _absent_field()


@dataclass
class RequirementConflict(Model):
    package: str = ""
    requirement: str = ""
    installed: Field[str] = _absent_field()


@dataclass
class Torch(Model):
    importable: bool = False
    error: Optional[str] = None
    version: Field[str] = _absent_field()
    cuda: Field[str] = _absent_field()
    hip: Field[str] = _absent_field()
    cudnn: Field[str] = _absent_field()
    nccl: Field[str] = _absent_field()
    arch_list: Field[List[str]] = _absent_field()
    cuda_available: Field[bool] = _absent_field()
    device_count: Field[int] = _absent_field()
    distributed_backends: Field[Dict[str, bool]] = _absent_field()
    loaded_libraries: Field[Dict[str, Optional[str]]] = _absent_field()
    cuda_init_error: Optional[str] = None
    path: Field[str] = _absent_field()
    origin: Field[TorchOrigin] = _optional_field()
    cwd_torch: Field[str] = _optional_field()
    cxx11_abi: Field[bool] = _optional_field()
    numpy: Field[NumpyBridge] = _optional_field()
    companions: Field[Dict[str, Companion]] = _optional_field()
    nvidia_wheels: Field[Dict[str, NvidiaWheel]] = _optional_field()
    mapped_cuda_libraries: Field[List[MappedLibrary]] = _optional_field()
    missing_files: Field[List[str]] = _optional_field()


@dataclass
class DeepSpeed(Model):
    version: Field[str] = _absent_field()
    importable: Field[bool] = _absent_field()
    error: Optional[str] = None
    torch_info: Field[Dict[str, Any]] = _absent_field()
    ops_error: Field[str] = _optional_field()


@dataclass
class ProbeRecord(Model):
    name: str = ""
    status: str = "skipped"
    seconds: Optional[float] = None
    error: Optional[str] = None


@dataclass
class Interface(Model):
    name: str = ""
    up: Field[bool] = _absent_field()
    kind: Field[str] = _absent_field()
    speed_mbps: Field[int] = _absent_field()
    addresses: Field[List[str]] = _absent_field()


@dataclass
class RdmaDevice(Model):
    name: str = ""
    state: Field[str] = _absent_field()
    link_layer: Field[str] = _absent_field()


@dataclass
class Network(Model):
    interfaces: Field[List[Interface]] = _absent_field()
    rdma_devices: Field[List[RdmaDevice]] = _absent_field()
    peermem_loaded: Field[bool] = _absent_field()


@dataclass
class FabricManager(Model):
    nvswitch_present: Field[bool] = _absent_field()
    running: Field[bool] = _absent_field()
    version: Field[str] = _absent_field()


@dataclass
class Extension(Model):
    name: str = ""
    version: Field[str] = _absent_field()
    arch_list: Field[List[str]] = _absent_field()
    torch_version: Field[str] = _absent_field()
    cuda_version: Field[str] = _absent_field()
    torch_version_source: Field[str] = _optional_field()
    requires_torch: Field[str] = _optional_field()
    cxx11_abi: Field[bool] = _optional_field()
    importable: Field[bool] = _optional_field()
    import_error: Field[Optional[str]] = _optional_field()


@dataclass
class BuildTools(Model):
    """What compiling CUDA/C++ extensions (DeepSpeed ops, torch.compile's Inductor) needs."""

    ninja: Field[str] = _absent_field()
    cc: Field[str] = _absent_field()
    cxx: Field[str] = _absent_field()
    libaio: Field[bool] = _absent_field()


@dataclass
class Snapshot(Model):
    created: str = ""
    host: Host = field(default_factory=Host)
    driver: Field[Driver] = _absent_field()
    gpus: Field[List[Gpu]] = field(default_factory=list)
    python: PythonEnv = field(default_factory=PythonEnv)
    torch: Field[Torch] = _absent_field()
    probes: List[ProbeRecord] = field(default_factory=list)
    topology: Field[Topology] = _absent_field()
    cuda_toolkit: Field[CudaToolkit] = _absent_field()
    libraries: Field[Libraries] = _absent_field()
    deepspeed: Field[DeepSpeed] = _absent_field()
    env: Field[Dict[str, str]] = _absent_field()
    network: Field[Network] = _absent_field()
    fabric_manager: Field[FabricManager] = _absent_field()
    extensions: Field[List[Extension]] = _absent_field()
    build_tools: Field[BuildTools] = _absent_field()
    requirement_conflicts: Field[List[RequirementConflict]] = _optional_field()

    def to_json(self, absent: Optional[Dict[str, str]] = None, path: str = "") -> Dict[str, Any]:
        reasons: Dict[str, str] = {}
        body = super().to_json(reasons, path)
        body.pop("absent", None)
        return {"schema": SCHEMA, **body, "absent": dict(sorted(reasons.items()))}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    def probe(self, name: str) -> Optional[ProbeRecord]:
        return next((p for p in self.probes if p.name == name), None)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def snapshot_from_json(data: Any, source: str = "<snapshot>") -> Snapshot:
    """Validate a decoded JSON document against the schema and build the model."""
    from envdoctor.jsonschema_lite import validate_snapshot

    if not isinstance(data, dict):
        raise SnapshotError(f"{source}: not a snapshot: expected a JSON object, got {type(data).__name__}")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise SnapshotError(
            f"{source}: unknown snapshot schema {schema!r}; this envdoctor reads {SCHEMA!r}"
        )
    errors = validate_snapshot(data)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SnapshotError(f"{source}: invalid snapshot: {errors[0]}{more}")
    absent = data.get("absent") or {}
    if not isinstance(absent, dict):
        raise SnapshotError(f"{source}: invalid snapshot: 'absent' must be an object")
    body = {k: v for k, v in data.items() if k not in ("schema", "absent")}
    try:
        snap = Snapshot.from_json(body, {str(k): str(v) for k, v in absent.items()})
    except (TypeError, ValueError, AttributeError) as exc:  # a shape the schema allows but we cannot use
        raise SnapshotError(f"{source}: invalid snapshot: {exc}") from None
    _check_versions(snap, source)
    return snap


# Versions that planning and the rules compute with. Others are left alone: an unreadable driver version is a
# finding (ED110), and the runner writes python.version "unknown" when the Python probe fails.
_VERSION_FIELDS = (("torch", "version"), ("torch", "cuda"), ("torch", "hip"), ("deepspeed", "version"))
_HIP_VERSION = re.compile(r"\d+\.\d+(\.\d+)*(-[0-9A-Za-z]+)?")  # torch.version.hip: '5.7.31921-d1770ee1b'


def _check_versions(snap: Snapshot, source: str) -> None:
    from envdoctor.versions import major_minor

    for section, name in _VERSION_FIELDS:
        value = getattr(getattr(snap, section), name, None)
        if not isinstance(value, str) or not value:  # "" is not recorded
            continue
        readable = _HIP_VERSION.fullmatch(value) if name == "hip" else major_minor(value.rstrip("+")) is not None
        if not readable:
            raise SnapshotError(f"{source}: invalid snapshot: {section}.{name} {value!r} is not a version")


def load_snapshot(path: Union[str, Path]) -> Snapshot:
    """Read a snapshot file; any problem is a SnapshotError naming the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SnapshotError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{p}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise SnapshotError(f"{p}: invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        what = "truncated JSON" if exc.pos >= len(text.rstrip()) else "invalid JSON"
        raise SnapshotError(f"{p}: {what} at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    return snapshot_from_json(data, str(p))

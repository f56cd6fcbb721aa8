"""The machine snapshot: a typed model of `snapshot.schema.json` with a lossless JSON round-trip.

A probed field holds a value, `Unavailable(why)` (known not to exist), `ProbeFailed(error)` or
`Unknown(why)` (both unknown). JSON keeps the schema's names: every marker is written as null, and its
reason goes to the top-level `absent` map (path -> "unavailable: why" / "failed: error" / "unknown: why");
a bare null (no reason) is an unknown that was not reported. Reading the file back restores them.
A list or map that holds only part of what is there is a `PartialList` / `PartialMap` (JSON: its path in the
optional top-level `partial` map): an entry it lacks is unknown, not absent (`lookup`, `Snapshot.package`).
Keys this model does not know are kept in `extra` and written back unchanged.

These dataclasses are the one source of truth for the format: `envdoctor.snapshot_codec` generates from them
the JSON Schema (`envdoctor/data/snapshot.schema.json`) and the decoders that check and load a document in one
pass (`envdoctor/snapshot_decoders.py`). After changing a section, run `python -m envdoctor.snapshot_codec --write`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import json
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union

from envdoctor.bounded_read import read_text
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


class PartialMap(dict):
    """A map that holds only part of what is there (rebuilt from a report, a listing cut short): a key it lacks
    is unknown, not absent. `partial` says why. JSON writes it as a plain object and its path in `partial`."""

    def __init__(self, items: Any = (), partial: str = "partial") -> None:
        super().__init__(items)
        self.partial = partial


class PartialList(list):
    """A list that holds only part of the items there are: an item it lacks is unknown, not absent."""

    def __init__(self, items: Any = (), partial: str = "partial") -> None:
        super().__init__(items)
        self.partial = partial


def partial_reason(value: object) -> Optional[str]:
    """Why a list or map holds only part of what is there; None when it is whole (or not a list or map)."""
    return value.partial if isinstance(value, (PartialMap, PartialList)) else None


def as_partial(value: Any, why: str) -> Any:
    """`value` (a list or a map) marked as holding only part of what is there; anything else unchanged."""
    if isinstance(value, dict):
        return PartialMap(value, why)
    if isinstance(value, list):
        return PartialList(value, why)
    return value


def lookup(container: Any, key: Union[str, int]) -> Any:
    """An entry of a map (or list): its value; `Unavailable` when a whole map or list lacks it; `Unknown` when a
    partial one lacks it; the container's own marker when the container itself is not there."""
    if is_absent(container):
        return container
    if isinstance(container, dict):
        if key in container:
            return container[key]
    elif isinstance(container, list) and isinstance(key, int):
        if 0 <= key < len(container):
            return container[key]
    else:
        return NOT_REPORTED if container is None else Unavailable("no such field here")
    why = partial_reason(container)
    return Unknown(f"not in a partial list: {why}") if why is not None else _NOT_IN_LIST


_NOT_IN_LIST = Unavailable("not in the list")
_NOT_INSTALLED = Unavailable("not installed")
_NAME_SEPARATORS = re.compile(r"[-_.]+")


def distribution_key(name: str) -> str:
    """A distribution name as package lists key it (PEP 503: 'Flash_Attn' -> 'flash-attn')."""
    return _NAME_SEPARATORS.sub("-", name).lower()


# Fields added after a snapshot format was first written: a document without them still loads
# (they read as unknown) and is written back without them.
NOT_RECORDED = ProbeFailed("not recorded in this snapshot")


def fact(default: Any = NOT_PROBED, *, factory: Optional[Callable[[], Any]] = None, doc: str = "",
         enum: Tuple[str, ...] = (), pattern: str = "", required: bool = False) -> Any:
    """A field of a section, with what the schema says of it besides its type (`envdoctor.snapshot_codec`
    generates the schema and the decoders from the types and these): its description, the strings it may hold,
    the pattern it matches, and whether a document must have it. `NOT_RECORDED` as default: a field added after
    the format was first written."""
    meta = {"doc": doc, "enum": enum, "pattern": pattern, "required": required}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Model:
    extra: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self, absent: Optional[Dict[str, str]] = None, path: str = "",
                partial: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            if getattr(self, f.name) is NOT_RECORDED:
                continue
            out[f.name] = _dump(getattr(self, f.name), absent, _join(path, f.name), partial)
        for k, v in self.extra.items():
            out.setdefault(k, v)
        return out


def _join(path: str, name: Union[str, int]) -> str:
    return f"{path}.{name}" if path else str(name)


def _marker(text: str) -> Absent:
    kind, _, why = text.partition(": ")
    if kind == "failed":
        return ProbeFailed(why)
    if kind == "unknown":
        return Unknown(why) if why else NOT_REPORTED
    return Unavailable(why or kind)


def _dump(value: Any, absent: Optional[Dict[str, str]], path: str, partial: Optional[Dict[str, str]] = None) -> Any:
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
        return value.to_json(absent, path, partial)
    if partial is not None and isinstance(value, (PartialMap, PartialList)):
        partial[path] = value.partial
    if isinstance(value, list):
        return [_dump(v, absent, _join(path, i), partial) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _dump(v, absent, _join(path, k), partial) for k, v in value.items()}
    return value


# --- the sections ---------------------------------------------------------------------------


@dataclass
class Cpu(Model):
    model: Field[str] = fact()
    physical_cores: Field[int] = fact()
    logical_cpus: Field[int] = fact()
    sockets: Field[int] = fact()


@dataclass
class NumaNode(Model):
    id: int = fact(0, required=True)
    cpus: Field[str] = fact(doc="cpulist form, e.g. '0-31,64-95'")
    memory_bytes: Field[int] = fact()


@dataclass
class Host(Model):
    os: str = fact("other", enum=('linux', 'windows', 'darwin', 'other'), required=True)
    arch: str = fact("unknown", required=True, doc="machine architecture as platform.machine() prints it: x86_64, aarch64, AMD64")
    hostname: Field[str] = fact(doc="may be redacted to null in shared reports")
    kernel: Field[str] = fact()
    distro: Field[str] = fact(doc="e.g. 'Ubuntu 22.04.4 LTS'")
    glibc: Field[str] = fact(doc="e.g. '2.35'; decides manylinux wheel tags")
    container: Field[str] = fact(enum=('none', 'docker', 'podman', 'kubernetes', 'lxc', 'apptainer', 'other'))
    wsl: Field[bool] = fact()
    cpu: Field[Cpu] = fact()
    memory_bytes: Field[int] = fact()
    shm_bytes: Field[int] = fact(doc="size of /dev/shm; NCCL and DataLoader workers need it")
    numa_nodes: Field[List[NumaNode]] = fact()
    iommu: Field[str] = fact(doc="e.g. 'off', 'passthrough', 'translated'; null if unknown")
    acs_enabled_bridges: Field[int] = fact(
        doc="PCIe bridges with ACS source validation/redirect on (breaks GPU peer-to-peer); null if unknown")
    container_gpu_access: Field[bool] = fact(doc="inside a container: the GPU device nodes are present")
    gpu_device_nodes: Field[List[str]] = fact()
    process_cpus: Field[str] = fact()


@dataclass
class Driver(Model):
    version: str = fact("", required=True, doc="kernel driver version, e.g. '550.54.14'")
    cuda_driver_version: Field[str] = fact(doc="highest CUDA version the driver supports, e.g. '12.4'")
    source: Field[str] = fact(doc="which probe read it: 'nvml', 'nvidia-smi', 'procfs'")


@dataclass
class Pcie(Model):
    gen: Field[int] = fact()
    max_gen: Field[int] = fact()
    width: Field[int] = fact()
    max_width: Field[int] = fact()


@dataclass
class NvLink(Model):
    links_active: Field[int] = fact()
    version: Field[int] = fact()


@dataclass
class NvLinkErrors(Model):
    """One NVLink's data-link error counters since the driver loaded (nvmlDeviceGetNvLinkErrorCounter)."""

    link: int = fact(0, required=True)
    crc_flit: Field[int] = fact(doc="flits with a CRC error (NVML_NVLINK_ERROR_DL_CRC_FLIT)")
    crc_data: Field[int] = fact(doc="data with a CRC error (NVML_NVLINK_ERROR_DL_CRC_DATA)")
    replay: Field[int] = fact(doc="packets replayed (NVML_NVLINK_ERROR_DL_REPLAY)")
    recovery: Field[int] = fact(doc="link recoveries (NVML_NVLINK_ERROR_DL_RECOVERY)")


@dataclass
class RowRemap(Model):
    """Row remapping (Ampere and newer): rows swapped for spare ones after memory errors."""

    correctable: Field[int] = fact(doc="rows remapped after correctable errors")
    uncorrectable: Field[int] = fact(doc="rows remapped after uncorrectable errors")
    pending: Field[bool] = fact(doc="a remap waits for a GPU reset")
    failed: Field[bool] = fact(doc="a remap failed: no spare row was left")
    histogram: Field[Dict[str, int]] = fact(
        doc="memory banks by spare rows left: max, high, partial, low, none (nvmlDeviceGetRowRemapperHistogram)")


@dataclass
class Xid(Model):
    """One Xid event the driver logged (`NVRM: Xid (PCI:...): CODE, ...`)."""

    code: int = fact(0, required=True)
    text: Field[str] = fact(doc="the rest of the kernel log line")


@dataclass
class GpuHealth(Model):
    """What DCGM's health checks read: throttling, Xids, link and memory error counters, limits, modes, clocks."""

    throttle_reasons: Field[List[str]] = fact(
        doc="active clock-event reasons, e.g. 'sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'sw_thermal_slowdown'")
    xids: Field[List[Xid]] = fact(doc="Xid events since boot for this GPU (kernel log)")
    xid_source: Field[str] = fact(enum=('kmsg', 'dmesg'))
    nvlink_errors: Field[List[NvLinkErrors]] = fact(doc="per active NVLink")
    row_remap: Field[RowRemap] = fact()
    power_limit_w: Field[float] = fact(doc="the power limit in force (nvmlDeviceGetPowerManagementLimit)")
    power_default_w: Field[float] = fact(doc="the board's default power limit")
    temperature_c: Field[int] = fact()
    slowdown_temperature_c: Field[int] = fact(doc="where the GPU starts slowing its clocks (NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)")
    compute_mode: Field[str] = fact(enum=('default', 'exclusive_thread', 'prohibited', 'exclusive_process'))
    app_clock_mhz: Field[int] = fact(doc="graphics application clock set now")
    default_app_clock_mhz: Field[int] = fact(doc="graphics application clock by default (the base clock)")
    max_clock_mhz: Field[int] = fact(doc="highest graphics clock")


@dataclass
class Gpu(Model):
    index: int = fact(0, required=True)
    name: Field[str] = fact(required=True, doc="null with a reason in `absent` when the driver did not give it")
    compute_capability: Field[str] = fact(pattern='^[0-9]+\\.[0-9]+$', required=True,
        doc="'8.0' for A100, '12.0' for RTX 5090; null with a reason in `absent` when unknown (never a placeholder)")
    uuid: Field[str] = fact()
    pci_bus_id: Field[str] = fact(doc="e.g. '0000:07:00.0'")
    memory_bytes: Field[int] = fact()
    numa_node: Field[int] = fact()
    cpu_affinity: Field[str] = fact(doc="cpulist of the CPUs nearest this GPU")
    pcie: Field[Pcie] = fact()
    nvlink: Field[NvLink] = fact()
    mig_enabled: Field[bool] = fact()
    persistence_mode: Field[bool] = fact()
    ecc_uncorrected: Field[int] = fact()
    retired_pages_pending: Field[bool] = fact()
    health: Field[GpuHealth] = fact(NOT_RECORDED, doc="health counters and limits (NVML; Xids from the kernel log)")

    @property
    def sm(self) -> int:
        """10 * major + minor; ValueError when the compute capability is not known."""
        if not isinstance(self.compute_capability, str):
            raise ValueError(f"GPU {self.index}: compute capability {self.compute_capability}")
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)


@dataclass
class Topology(Model):
    links: List[List[str]] = fact(factory=list)
    p2p: Field[List[List[Optional[bool]]]] = fact(doc="peer access possible between GPU i and j")


@dataclass
class CudaToolkit(Model):
    nvcc_version: Field[str] = fact(doc="e.g. '12.4'")
    cuda_home: Field[str] = fact()
    nvcc_path: Field[str] = fact()


@dataclass
class LibCopy(Model):
    version: Field[str] = fact()
    path: Field[str] = fact()


@dataclass
class Libraries(Model):
    cudnn: Field[List[LibCopy]] = fact()
    nccl: Field[List[LibCopy]] = fact()
    cudart: Field[List[LibCopy]] = fact()
    cublas: Field[List[LibCopy]] = fact()


@dataclass
class PythonEnv(Model):
    version: str = fact("", required=True, doc="e.g. '3.11.7'")
    implementation: Field[str] = fact()
    executable: Field[str] = fact()
    env_kind: Field[str] = fact(enum=('venv', 'conda', 'uv', 'system', 'other'))
    externally_managed: Field[bool] = fact(doc="PEP 668 marker present")
    packages: Field[Dict[str, str]] = fact(doc="distribution name (normalised) -> version, for the packages that matter")
    python_headers: Field[bool] = fact()
    free_threaded: Field[bool] = fact(NOT_RECORDED,
        doc="a free-threaded build (sysconfig Py_GIL_DISABLED, 'cp313t'): few wheels exist for it")
    pointer_bits: Field[int] = fact(NOT_RECORDED, doc="64, or 32 for a 32-bit interpreter (no torch wheels)")
    build_errors: Field[Dict[str, str]] = fact(NOT_RECORDED,
        doc="distribution name -> the error its source build printed (a report's build log, a failed install); no probe "
            "re-runs a build, so a snapshot of a machine records none")
    # what envdoctor's fix journal says was interrupted here
    interrupted_fix: Field[str] = fact(NOT_RECORDED,
        doc="an envdoctor fix or undo that was killed in this environment and may have left it half-changed (its journal); "
            "null with an absent reason: none")


@dataclass
class TorchOrigin(Model):
    """Where `import torch` finds torch, and whether that is inside the environment's site-packages."""

    file: Field[str] = fact(doc="the file `import torch` finds (realpath)")
    kind: Field[str] = fact(enum=('site-packages', 'user-site', 'pythonpath', 'cwd', 'editable', 'other'),
        doc="where that file lies: the environment's site-packages, the user site, a PYTHONPATH entry, the current directory,"
            " an editable install, elsewhere")
    outside_site_packages: Field[bool] = fact(
        doc="true when torch is not imported from the environment's site-packages (shadowed)")
    site_packages: Field[List[str]] = fact(doc="the environment's site-packages directories")
    dist_location: Field[str] = fact(doc="the directory holding torch's installed .dist-info")


@dataclass
class NumpyBridge(Model):
    version: Field[str] = fact(doc="installed numpy (absent: not installed)")
    works: Field[bool] = fact(doc="torch.zeros(1).numpy() succeeded")
    error: Optional[str] = fact(None,
        doc="its error, e.g. 'RuntimeError: Numpy is not available', with NumPy's 'compiled using NumPy 1.x' line when "
            "printed")


@dataclass
class Companion(Model):
    """torchvision / torchaudio, imported after torch in the same process."""

    version: Field[str] = fact()
    requires_torch: Field[str] = fact(doc="its Requires-Dist on torch, e.g. '==2.5.1'")
    importable: Field[bool] = fact(doc="imported after torch in the same process")
    error: Optional[str] = fact(None, doc="the import error text")
    nms_op: Field[bool] = fact(doc="torchvision only: torch.ops.torchvision.nms exists (its C++ operators loaded)")
    warnings: Field[List[str]] = fact(doc="warnings its import raised (first 3)")
    build_version: Field[str] = fact(NOT_RECORDED,
        doc="__version__ in the package's own version file (torchvision/version.py), e.g. '0.28.0+cu130': names the "
            "build (CPU or a CUDA version) where the dist-info version, '0.28.0' from PyPI, does not")


@dataclass
class NvidiaWheel(Model):
    required: Field[str] = fact(doc="torch's requirement text, e.g. 'nvidia-nccl-cu12==2.21.5; platform_system == \"Linux\"'")
    installed: Field[str] = fact(doc="installed version; absent when not installed")


@dataclass
class MappedLibrary(Model):
    path: str = fact("", required=True)
    file_version: Field[str] = fact(doc="version in the real file name, e.g. '12.4.127' (may be the major only)")
    dist: Field[str] = fact(doc="the nvidia-* wheel that installed the file")
    dist_version: Field[str] = fact()


@dataclass
class RequirementConflict(Model):
    package: str = fact("", required=True)
    requirement: str = fact("", required=True)
    installed: Field[str] = fact(doc="installed version; null with 'unavailable: not installed' when missing")


@dataclass
class Torch(Model):
    importable: bool = fact(False, required=True)
    error: Optional[str] = fact(None)
    version: Field[str] = fact(doc="torch.__version__, e.g. '2.5.1+cu124'")
    cuda: Field[str] = fact(
        doc="torch.version.cuda; a CPU build is null with absent['torch.cuda'] = 'unavailable: CPU build'; a bare null is "
            "unknown")
    hip: Field[str] = fact()
    cudnn: Field[str] = fact(doc="torch.backends.cudnn.version() as a string")
    nccl: Field[str] = fact(doc="'2.21.5'")
    arch_list: Field[List[str]] = fact(doc="torch.cuda.get_arch_list(): 'sm_80', 'compute_90' ...")
    cuda_available: Field[bool] = fact()
    device_count: Field[int] = fact()
    distributed_backends: Field[Dict[str, bool]] = fact()
    loaded_libraries: Field[Dict[str, Optional[str]]] = fact(
        doc="library name ('cudnn', 'nccl', 'cublas', 'cudart') -> the file the torch process actually mapped after "
            "initialising CUDA (from /proc/self/maps)")
    cuda_init_error: Optional[str] = fact(None)
    path: Field[str] = fact(doc="torch.__file__ as imported")
    origin: Field[TorchOrigin] = fact(NOT_RECORDED,
        doc="where `import torch` finds torch in the target interpreter (read before importing it)")
    cwd_torch: Field[str] = fact(NOT_RECORDED,
        doc="a torch package or torch.py in the current directory, which shadows the installed torch for scripts run there")
    cxx11_abi: Field[bool] = fact(NOT_RECORDED, doc="torch._C._GLIBCXX_USE_CXX11_ABI")
    numpy: Field[NumpyBridge] = fact(NOT_RECORDED, doc="the NumPy bridge, exercised in the torch process")
    companions: Field[Dict[str, Companion]] = fact(NOT_RECORDED,
        doc="torchvision / torchaudio when installed, keyed by distribution name")
    nvidia_wheels: Field[Dict[str, NvidiaWheel]] = fact(NOT_RECORDED,
        doc="nvidia-* distributions: installed ones and those torch's Requires-Dist pins")
    mapped_cuda_libraries: Field[List[MappedLibrary]] = fact(NOT_RECORDED,
        doc="CUDA libraries the torch process really mapped (/proc/self/maps after import), with their on-disk versions")
    missing_files: Field[List[str]] = fact(NOT_RECORDED,
        doc="when torch does not import: its shared libraries that its RECORD lists but the disk lacks")


@dataclass
class DeepSpeed(Model):
    version: Field[str] = fact()
    importable: Field[bool] = fact()
    error: Optional[str] = fact(None)
    torch_info: Field[Dict[str, Any]] = fact()
    ops_error: Field[str] = fact(NOT_RECORDED,
        doc="what DeepSpeed's own check for building CUDA ops raised (the check `ds_report` runs: a CUDA toolkit found "
            "through CUDA_HOME); null with an 'unavailable' reason when it passed; omitted when DeepSpeed's accelerator is "
            "not CUDA")
    ops: Field[Dict[str, Any]] = fact(NOT_RECORDED,
        doc="what `ds_report` lists: op name -> {compatible: its builder's is_compatible() here, installed: prebuilt in "
            "this DeepSpeed (its build record; null: no record)}")


@dataclass
class ProbeRecord(Model):
    name: str = fact("", required=True)
    status: str = fact("skipped", enum=('ok', 'failed', 'timeout', 'skipped'), required=True)
    seconds: Optional[float] = fact(None)
    error: Optional[str] = fact(None)


@dataclass
class Interface(Model):
    name: str = fact("", required=True)
    up: Field[bool] = fact()
    kind: Field[str] = fact(enum=('ethernet', 'infiniband', 'loopback', 'bridge', 'virtual', 'other'))
    speed_mbps: Field[int] = fact()
    addresses: Field[List[str]] = fact(doc="may be redacted in shared reports")


@dataclass
class RdmaDevice(Model):
    name: str = fact("", doc="e.g. 'mlx5_0'")
    state: Field[str] = fact()
    link_layer: Field[str] = fact(doc="'InfiniBand' or 'Ethernet' (RoCE)")


@dataclass
class Network(Model):
    interfaces: Field[List[Interface]] = fact()
    rdma_devices: Field[List[RdmaDevice]] = fact()
    peermem_loaded: Field[bool] = fact(doc="nvidia-peermem (GPUDirect RDMA) kernel module loaded")


@dataclass
class FabricManager(Model):
    nvswitch_present: Field[bool] = fact()
    running: Field[bool] = fact()
    version: Field[str] = fact()


@dataclass
class Extension(Model):
    name: str = fact("", required=True)
    version: Field[str] = fact()
    arch_list: Field[List[str]] = fact(doc="sm_XX / compute_XX found in its binaries")
    torch_version: Field[str] = fact(
        doc="torch it was built against, from its own record (xformers build info, flash-attn wheel version, a Requires-Dist "
            "torch==X pin, DeepSpeed's build record)")
    cuda_version: Field[str] = fact()
    torch_version_source: Field[str] = fact(NOT_RECORDED, enum=('build record', 'wheel version', 'requires-dist'))
    requires_torch: Field[str] = fact(NOT_RECORDED, doc="its Requires-Dist on torch")
    cxx11_abi: Field[bool] = fact(NOT_RECORDED, doc="the C++ ABI it was built with, where its name records it (flash-attn)")
    importable: Field[bool] = fact(NOT_RECORDED,
        doc="imported after torch in the same process (flash_attn, xformers, vllm, bitsandbytes, apex, flashinfer)")
    import_error: Field[Optional[str]] = fact(NOT_RECORDED, doc="the import error text, e.g. 'undefined symbol: _ZN3c10...'")


@dataclass
class BuildTools(Model):
    """What compiling CUDA/C++ extensions (DeepSpeed ops, torch.compile's Inductor) needs."""

    ninja: Field[str] = fact()
    cc: Field[str] = fact()
    cxx: Field[str] = fact()
    libaio: Field[bool] = fact()


@dataclass
class Snapshot(Model):
    created: str = fact("", required=True, doc="ISO 8601 UTC time of the probe run")
    host: Host = fact(factory=Host, required=True)
    driver: Field[Driver] = fact(required=True, doc="null when no NVIDIA driver is present")
    gpus: Field[List[Gpu]] = fact(factory=list, required=True,
        doc="the GPUs the driver lists; [] when no NVIDIA driver was found; null with a 'failed:' reason when they could not "
            "be listed (unknown, not 'no GPUs')")
    python: PythonEnv = fact(factory=PythonEnv, required=True)
    torch: Field[Torch] = fact(required=True,
        doc="null with absent['torch'] = 'unavailable: torch is not installed' when it is not installed; a bare null is "
            "unknown; present with importable=false and error set when it is installed but broken")
    probes: List[ProbeRecord] = fact(factory=list, required=True)
    topology: Field[Topology] = fact(
        doc="GPU-to-GPU link matrix as 'nvidia-smi topo -m' names links: X, NV<n>, PIX, PXB, PHB, NODE, SYS")
    cuda_toolkit: Field[CudaToolkit] = fact(
        doc="the CUDA toolkit on the machine (not the one inside the torch wheel); matters for DeepSpeed ops and extensions")
    libraries: Field[Libraries] = fact(
        doc="system copies of CUDA libraries that the loader can see (ldconfig, LD_LIBRARY_PATH); a copy here can shadow the "
            "one a wheel bundles")
    deepspeed: Field[DeepSpeed] = fact()
    env: Field[Dict[str, str]] = fact(
        doc="the environment variables that matter (CUDA_*, NCCL_*, LD_LIBRARY_PATH, TORCH_*, ...), secrets removed "
            "(PYTHONPATH and LD_PRELOAD included)")
    network: Field[Network] = fact(doc="what NCCL can use to talk to other hosts")
    fabric_manager: Field[FabricManager] = fact(
        doc="NVSwitch systems (HGX/DGX A100, H100, H200, B200) need NVIDIA Fabric Manager running at the driver's version; "
            "null where no NVSwitch")
    extensions: Field[List[Extension]] = fact(
        doc="installed packages with compiled CUDA code: flash-attn, xformers, bitsandbytes, apex, DeepSpeed prebuilt ops, "
            "...")
    build_tools: Field[BuildTools] = fact()
    requirement_conflicts: Field[List[RequirementConflict]] = fact(NOT_RECORDED,
        doc="what `pip check` would say for the packages around torch: each Requires-Dist not met by what is installed")

    def to_json(self, absent: Optional[Dict[str, str]] = None, path: str = "",
                partial: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        reasons: Dict[str, str] = {}
        parts: Dict[str, str] = {}
        body = super().to_json(reasons, path, parts)
        body.pop("absent", None)
        kept = body.pop("partial", None)  # entries on no list or map (kept in `extra` when read)
        if isinstance(kept, dict):
            parts = {**kept, **parts}
        out = {"schema": SCHEMA, **body}
        if parts:  # optional: a snapshot without it holds whole lists, as before it existed
            out["partial"] = dict(sorted(parts.items()))
        out["absent"] = dict(sorted(reasons.items()))
        return out

    def package(self, name: str) -> Field[str]:
        """The installed version of distribution `name` ('flash_attn' or 'flash-attn'): its version string;
        `Unavailable` when a whole package list lacks it (not installed); `Unknown` when the list is partial
        (rebuilt from a report, a listing cut short) or itself unknown. Every "is X installed" reads this."""
        packages = self.python.packages
        if not isinstance(packages, dict):
            return packages if is_absent(packages) else NOT_REPORTED
        key = distribution_key(name)
        if key not in packages:
            key = next((k for k in packages if distribution_key(k) == key), key)
        found = lookup(packages, key)
        return _NOT_INSTALLED if found is _NOT_IN_LIST else found

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    def probe(self, name: str) -> Optional[ProbeRecord]:
        return next((p for p in self.probes if p.name == name), None)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _schema_problem(schema: Any) -> str:
    """Why a document whose "schema" is not SCHEMA cannot be read, and what to do about it."""
    said = f"unknown snapshot schema {schema!r}; this envdoctor reads {SCHEMA!r}"
    m = re.fullmatch(r"envdoctor\.snapshot/(\d+)", schema) if isinstance(schema, str) else None
    if m and int(m.group(1)) > int(SCHEMA.rsplit("/", 1)[1]):
        return f"{said}: the snapshot comes from a newer envdoctor; upgrade envdoctor (pip install -U envdoctor) to read it"
    if schema is None:
        return f"{said}: the document has no \"schema\" field, so it is not an envdoctor snapshot"
    return said


def snapshot_from_json(data: Any, source: str = "<snapshot>") -> Snapshot:
    """Validate a decoded JSON document against the schema and build the model."""
    from envdoctor.snapshot_decoders import Invalid, decode

    if not isinstance(data, dict):
        raise SnapshotError(f"{source}: not a snapshot: expected a JSON object, got {type(data).__name__}")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise SnapshotError(f"{source}: {_schema_problem(schema)}")
    absent = data.get("absent")
    partial = data.get("partial")
    body = {k: v for k, v in data.items() if k not in ("schema", "absent", "partial")}
    try:
        if absent is None:
            absent = {}
        elif not _strings(absent):
            raise Invalid("absent")
        if partial is not None and not _strings(partial):
            raise Invalid("partial")
        snap = decode(body, absent)
        if partial:
            _mark_partial(snap, partial)
    except Invalid as exc:  # the schema's validator says every way the document breaks it
        _refuse(data, source, str(exc))
    except (TypeError, ValueError, AttributeError) as exc:  # a shape the schema allows but we cannot use
        raise SnapshotError(f"{source}: invalid snapshot: {exc}") from None
    _check_versions(snap, source)
    return snap


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and (set(map(type, value.values())) <= {str}
                                        or all(isinstance(v, str) for v in value.values()))


def _mark_partial(snap: Snapshot, partial: Dict[str, str]) -> None:
    """Wrap each list or map that `partial` names (JSON path -> why) as a PartialList / PartialMap. An entry on
    no list or map (a null list: unknown already) is kept in `extra` and written back unchanged."""
    left: Dict[str, str] = {}
    for path, why in partial.items():
        *parents, last = path.split(".")
        holder: Any = snap
        for part in parents:
            holder = _child(holder, part)
        value = _child(holder, last)
        if isinstance(value, (dict, list)) and not isinstance(value, (PartialMap, PartialList)):
            wrapped = as_partial(value, why)
            if isinstance(holder, Model):
                setattr(holder, last, wrapped)
            elif isinstance(holder, dict):
                holder[last] = wrapped
            else:
                holder[int(last)] = wrapped
        else:
            left[path] = why
    if left:
        snap.extra["partial"] = left


def _child(holder: Any, part: str) -> Any:
    if isinstance(holder, Model):
        return getattr(holder, part, None) if part != "extra" else None
    if isinstance(holder, dict):
        return holder.get(part)
    if isinstance(holder, list) and part.isdigit() and int(part) < len(holder):
        return holder[int(part)]
    return None


def _refuse(data: Dict[str, Any], source: str, where: str) -> typing.NoReturn:
    from envdoctor.jsonschema_lite import validate_snapshot

    errors = validate_snapshot(data) or [f"{where}: not what the schema allows"]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise SnapshotError(f"{source}: invalid snapshot: {errors[0]}{more}")


# Versions that planning and the rules compute with. Others are left alone: an unreadable driver version is a
# finding (ED110), and the runner writes python.version "unknown" when the Python probe fails.
_VERSION_FIELDS = (("torch", "version"), ("torch", "cuda"), ("torch", "hip"), ("deepspeed", "version"))
_HIP_VERSION = re.compile(r"\d+\.\d+(\.\d+)*(-[0-9A-Za-z]+)?")  # torch.version.hip: '5.7.31921-d1770ee1b'


def _check_versions(snap: Snapshot, source: str) -> None:
    for section, name in _VERSION_FIELDS:
        value = getattr(getattr(snap, section), name, None)
        if not isinstance(value, str) or not value:  # "" is not recorded
            continue
        if not _readable(name, value):
            raise SnapshotError(f"{source}: invalid snapshot: {section}.{name} {value!r} is not a version")


@functools.lru_cache(maxsize=4096)  # a fleet's snapshots share a few versions
def _readable(name: str, value: str) -> bool:
    from envdoctor.versions import major_minor

    return bool(_HIP_VERSION.fullmatch(value)) if name == "hip" else major_minor(value.rstrip("+")) is not None


def load_snapshot(path: Union[str, Path]) -> Snapshot:
    """Read a snapshot file; any problem is a SnapshotError naming the file."""
    return snapshot_from_json(read_snapshot_json(path), str(Path(path)))


def read_snapshot_json(path: Union[str, Path]) -> Any:
    """The JSON document in a snapshot file, not yet validated; SnapshotError naming the file."""
    p = Path(path)
    try:
        text = read_text(p)
    except FileNotFoundError:
        raise SnapshotError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{p}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise SnapshotError(f"{p}: invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise SnapshotError(f"{p}: the file is empty{' (only whitespace)' if text else ''}: not a snapshot") from None
        what = "truncated JSON" if exc.pos >= len(text.rstrip()) else "invalid JSON"
        raise SnapshotError(f"{p}: {what} at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError:  # an integer of more than 4300 digits
        raise SnapshotError(f"{p}: invalid snapshot: a number too long to be one") from None
    gpus = data.get("gpus") if isinstance(data, dict) else None
    if isinstance(gpus, list) and len(gpus) > MAX_GPUS:
        raise SnapshotError(f"{p}: invalid snapshot: {len(gpus)} GPUs, more than the {MAX_GPUS} one machine may hold")
    return data


MAX_GPUS = 1024  # per machine; the largest single systems hold a few hundred

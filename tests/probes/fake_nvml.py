"""A stand-in for the nvidia-ml-py module: the outermost boundary of the NVML probe.

It models a 4-GPU HGX-like board: GPUs 0-1 and 2-3 joined by NVLink pairs (4 links each), the two
pairs under different CPUs; GPU 3 lacks one function (as an old driver would), and ECC reads are
not supported on GPU 1.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Dict, List, Optional, Set


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


NOT_SUPPORTED, LIBRARY_NOT_FOUND, FUNCTION_NOT_FOUND, DRIVER_NOT_LOADED = 3, 12, 13, 9
UNKNOWN, GPU_IS_LOST = 999, 15


def _raiser(code: int):
    def fail(*args):
        raise NVMLError(code)
    return fail


class FakeNvml:
    def __init__(self, gpus: int = 4, init_error: Optional[int] = None, drop: Set[str] = frozenset(),
                 errors: Optional[Dict[str, int]] = None) -> None:
        self.n = gpus
        self.init_error = init_error
        self.calls: List[str] = []
        self.initialised = 0
        self.shutdowns = 0
        for name in drop:  # functions this nvidia-ml-py does not have at all
            setattr(self, name, None)
        for name, code in (errors or {}).items():  # functions that fail with this NVML error code
            setattr(self, name, _raiser(code))

    # lifecycle
    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    # system
    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"550.54.15"

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return 12040

    def nvmlDeviceGetCount(self) -> int:
        return self.n

    def nvmlDeviceGetHandleByIndex(self, i: int) -> SimpleNamespace:
        return SimpleNamespace(i=i)

    # per device
    def nvmlDeviceGetName(self, h) -> str:
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, h) -> str:
        return f"GPU-0000000{h.i}-aaaa-bbbb-cccc-dddddddddddd"

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (9, 0)

    def _bus(self, i: int) -> bytes:
        return f"00000000:{0x18 + 0x10 * i:02X}:00.0".encode()

    def nvmlDeviceGetPciInfo_v3(self, h):
        return SimpleNamespace(busId=self._bus(h.i))

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(total=85520809984)

    def nvmlDeviceGetNumaNodeId(self, h) -> int:
        if h.i == 3:
            raise NVMLError(FUNCTION_NOT_FOUND)
        return 0 if h.i < 2 else 1

    def nvmlDeviceGetCpuAffinity(self, h, words: int):
        mask = 0xFF if h.i < 2 else 0xFF00
        return [mask] + [0] * (words - 1)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h) -> int:
        return 5

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, h) -> int:
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h) -> int:
        return 8 if h.i == 2 else 16

    def nvmlDeviceGetMaxPcieLinkWidth(self, h) -> int:
        return 16

    def _peer(self, i: int) -> int:
        return i ^ 1

    def nvmlDeviceGetNvLinkState(self, h, link: int) -> int:
        if link >= 18:
            raise NVMLError(2)
        return 1 if link < 4 else 0

    def nvmlDeviceGetNvLinkVersion(self, h, link: int) -> int:
        return 6  # NVML_NVLINK_VERSION_4_0

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h, link: int) -> int:
        return 0  # a GPU, not an NVSwitch

    def nvmlDeviceGetNvLinkRemotePciInfo_v2(self, h, link: int):
        return SimpleNamespace(busId=self._bus(self._peer(h.i)))

    def nvmlDeviceGetMigMode(self, h):
        return (0, 0)

    def nvmlDeviceGetPersistenceMode(self, h) -> int:
        return 1

    def nvmlDeviceGetTotalEccErrors(self, h, kind: int, counter: int) -> int:
        if h.i == 1:
            raise NVMLError(NOT_SUPPORTED)
        return 0

    def nvmlDeviceGetRemappedRows(self, h):
        return (0, 0, 0, 0)

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b) -> int:
        return 40 if (a.i < 2) == (b.i < 2) else 50  # NODE within a socket, SYS across

    def nvmlDeviceGetP2PStatus(self, a, b, index: int) -> int:
        return 0


def fake_sys_tree(root, devices: Dict[str, Dict[str, str]]) -> None:
    """Write /sys/bus/pci/devices/<bdf>/<file> entries under root."""
    for bdf, files in devices.items():
        d = root / "sys" / "bus" / "pci" / "devices" / bdf
        d.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (d / name).write_text(text)

"""What the GPUs' health counters did while `selftest gpu --stress` ran, read through the one NVML gateway:
the clock-event reasons seen (sampled), and the growth of uncorrected ECC errors, NVLink error counters and
Xid events (kernel log) between the start and the end of the run. Each is a value or the reason it is not."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from envdoctor.probes.base import ProbeContext
from envdoctor.probes.gpu_health import pci_key, read_kernel_xids, read_throttle
from envdoctor.probes.nvml import Nvml
from envdoctor.snapshot import is_absent

SAMPLE_SECONDS = 0.5
_NVLINK_COUNTERS = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))
_MAX_LINKS = 18


@dataclass
class _Reading:
    ecc: Any
    nvlink: Dict[int, Dict[str, Any]]


@dataclass
class GpuWatch:
    """Start before the burn, `stop()` after it: the health deltas as plain JSON-able values."""

    lib: Any = None  # the pynvml module or a fake of it (None: import pynvml)
    ctx: ProbeContext = field(default_factory=ProbeContext)
    interval: float = SAMPLE_SECONDS
    _nvml: Optional[Nvml] = None
    _handles: List[Any] = field(default_factory=list)
    _names: List[str] = field(default_factory=list)
    _buses: List[str] = field(default_factory=list)
    _before: List[_Reading] = field(default_factory=list)
    _xids_before: Any = None
    _seen: List[Dict[str, int]] = field(default_factory=list)
    _samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: Optional[threading.Thread] = None
    why: Optional[str] = None  # set when NVML cannot be read at all

    def start(self) -> None:
        nvml = Nvml(self.lib)
        problem = nvml.init()
        if problem is not None:
            self.why = str(problem)
            return
        self._nvml = nvml
        count = nvml.query("nvmlDeviceGetCount")
        if not isinstance(count, int):
            self.why = f"NVML could not count the GPUs: {count}"
            return
        self._handles = [nvml.query("nvmlDeviceGetHandleByIndex", i) for i in range(count)]
        for h in self._handles:
            name = nvml.query("nvmlDeviceGetName", h)
            self._names.append(name if isinstance(name, str) else "")
            pci = nvml.query(("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo"), h)
            bus = getattr(pci, "busId", "") if not is_absent(pci) else ""
            self._buses.append(bus.decode() if isinstance(bus, bytes) else str(bus))
        self._seen = [{} for _ in self._handles]
        self._xids_before = read_kernel_xids(self.ctx)[0]
        self._before = [self._read(h) for h in self._handles]
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="envdoctor-gpu-watch", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        assert self._nvml is not None
        for i, h in enumerate(self._handles):
            reasons = read_throttle(self._nvml, h)
            if isinstance(reasons, list):
                for r in reasons:
                    self._seen[i][r] = self._seen[i].get(r, 0) + 1
        self._samples += 1

    def _read(self, h: Any) -> _Reading:
        assert self._nvml is not None
        ecc = self._nvml.query("nvmlDeviceGetTotalEccErrors", h, 1, 0)  # uncorrected, volatile
        links: Dict[int, Dict[str, Any]] = {}
        for link in range(_MAX_LINKS):
            state = self._nvml.query("nvmlDeviceGetNvLinkState", h, link)
            if is_absent(state):
                break
            if state:
                links[link] = {name: self._nvml.query("nvmlDeviceGetNvLinkErrorCounter", h, link, code)
                               for name, code in _NVLINK_COUNTERS}
        return _Reading(ecc=ecc, nvlink=links)

    def stop(self) -> Dict[str, Any]:
        """Per NVML GPU: reasons seen (samples each), ECC, NVLink and Xid growth; {'error': why} without NVML."""
        if self._nvml is None:
            return {"error": self.why or "not started"}
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._sample()
        afters = [self._read(h) for h in self._handles]
        xids_after = read_kernel_xids(self.ctx)[0]  # after the counters: what the driver logged up to now
        out: List[Dict[str, Any]] = []
        for i, after in enumerate(afters):
            before = self._before[i]
            entry: Dict[str, Any] = {"index": i, "name": self._names[i], "throttle_seen": dict(self._seen[i])}
            entry["ecc_uncorrected_delta"] = (after.ecc - before.ecc if isinstance(after.ecc, int)
                                              and isinstance(before.ecc, int) else str(after.ecc))
            grown = {}
            for link, counters in after.nvlink.items():
                was = before.nvlink.get(link, {})
                delta = {k: v - was[k] for k, v in counters.items() if isinstance(v, int) and isinstance(was.get(k), int)}
                if any(delta.values()):
                    grown[str(link)] = delta
            entry["nvlink_delta"] = grown if after.nvlink else "no active NVLink"
            entry["xids_new"] = self._new_xids(i, xids_after)
            out.append(entry)
        self._nvml.shutdown()
        return {"samples": self._samples, "gpus": out}

    def _new_xids(self, i: int, after: Any) -> Any:
        if not isinstance(after, dict) or not isinstance(self._xids_before, dict):
            return str(after if not isinstance(after, dict) else self._xids_before)
        key = pci_key(self._buses[i]) if self._buses[i] else None
        if key is None:
            return "the GPU's PCI address is unknown"
        was = len(self._xids_before.get(key, []))
        return [{"code": x.code, "text": x.text} for x in after.get(key, [])[was:]]


def nvlink_growth(entry: Dict[str, Any]) -> List[str]:
    """'link 3: +12 crc_flit' lines of one GPU's watch entry."""
    grown = entry.get("nvlink_delta")
    if not isinstance(grown, dict):
        return []
    return [f"link {link}: " + ", ".join(f"+{v} {k}" for k, v in d.items() if v) for link, d in sorted(grown.items())]

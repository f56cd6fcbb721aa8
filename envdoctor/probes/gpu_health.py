"""GPU health facts (what `dcgmi diag` reads), through the one NVML gateway; Xid events from the kernel log.

Each fact is a value, `Unavailable(why)` (this GPU or driver has no such counter: NVML_ERROR_NOT_SUPPORTED, a
function this driver or nvidia-ml-py lacks) or `ProbeFailed` (NVML answered with an error). NVML hands out Xid
events only to a listener registered before they happen, so the Xids since boot come from the kernel log
(/dev/kmsg, else `dmesg`); when neither is readable they are unknown, never "none".
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any, Dict, List, Tuple, Union

from envdoctor.probes.base import ProbeContext
from envdoctor.probes.nvml import Nvml
from envdoctor.processes import run_command
from envdoctor.snapshot import GpuHealth, NvLinkErrors, ProbeFailed, RowRemap, Unavailable, Unknown, Xid, is_absent

# nvmlClocksEventReason* / nvmlClocksThrottleReason* bits (nvml.h); gpu_idle is not a problem and is left out.
THROTTLE_BITS: Tuple[Tuple[int, str], ...] = (
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)
THROTTLE_QUERY = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
_COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
# nvmlNvLinkErrorCounter_t
_NVLINK_COUNTERS = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))
_MAX_LINKS = 18
_TEMPERATURE_GPU = 0  # NVML_TEMPERATURE_GPU
_THRESHOLD_SLOWDOWN = 1  # NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
_CLOCK_GRAPHICS = 0  # NVML_CLOCK_GRAPHICS
_KERNEL_LOG_BYTES = 8 * 1024 * 1024
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?\): (\d+),?\s*(.*)")

KernelXids = Union[Dict[str, List[Xid]], Unknown]  # PCI 'dddd:bb:dd' -> its Xids, or why the log is unreadable


def throttle_names(mask: int) -> List[str]:
    """The active reasons of an NVML clock-event mask, by name."""
    return [name for bit, name in THROTTLE_BITS if mask & bit]


def read_throttle(nvml: Nvml, h: Any) -> Any:
    """The clock-event reasons active now (new drivers: ...ClocksEventReasons; older: ...ThrottleReasons)."""
    mask = nvml.query(THROTTLE_QUERY, h)
    return throttle_names(int(mask)) if isinstance(mask, int) else mask


def read_health(nvml: Nvml, h: Any, bus_id: Any, kernel: Tuple[KernelXids, Any]) -> GpuHealth:
    """Every health fact of the GPU behind handle `h`; `kernel` is `read_kernel_xids`'s answer for the host."""
    xids, source = kernel
    health = GpuHealth(throttle_reasons=read_throttle(nvml, h), xid_source=source)
    if isinstance(xids, dict):
        key = pci_key(bus_id) if isinstance(bus_id, str) else None
        health.xids = list(xids.get(key, [])) if key else Unknown("the GPU's PCI address is unknown")
    else:
        health.xids = xids
    health.nvlink_errors = _nvlink_errors(nvml, h)
    health.row_remap = _row_remap(nvml, h)
    health.power_limit_w = _watts(nvml.query("nvmlDeviceGetPowerManagementLimit", h))
    health.power_default_w = _watts(nvml.query("nvmlDeviceGetPowerManagementDefaultLimit", h))
    health.temperature_c = _int(nvml.query("nvmlDeviceGetTemperature", h, _TEMPERATURE_GPU))
    health.slowdown_temperature_c = _int(nvml.query("nvmlDeviceGetTemperatureThreshold", h, _THRESHOLD_SLOWDOWN))
    mode = nvml.query("nvmlDeviceGetComputeMode", h)
    health.compute_mode = _COMPUTE_MODES.get(mode, Unknown(f"compute mode {mode}")) if isinstance(mode, int) else mode
    health.app_clock_mhz = _int(nvml.query("nvmlDeviceGetApplicationsClock", h, _CLOCK_GRAPHICS))
    health.default_app_clock_mhz = _int(nvml.query("nvmlDeviceGetDefaultApplicationsClock", h, _CLOCK_GRAPHICS))
    health.max_clock_mhz = _int(nvml.query("nvmlDeviceGetMaxClockInfo", h, _CLOCK_GRAPHICS))
    return health


def _int(value: Any) -> Any:
    return int(value) if isinstance(value, int) else value


def _watts(milliwatts: Any) -> Any:
    return round(milliwatts / 1000.0, 1) if isinstance(milliwatts, int) else milliwatts


def _nvlink_errors(nvml: Nvml, h: Any) -> Any:
    links: List[NvLinkErrors] = []
    for link in range(_MAX_LINKS):
        state = nvml.query("nvmlDeviceGetNvLinkState", h, link)
        if is_absent(state):
            if link == 0 and isinstance(state, Unavailable):
                return Unavailable(f"no NVLink ({state.reason})")
            if not isinstance(state, Unavailable):  # an NVML failure, not a link that is not there: unknown
                return ProbeFailed(f"NVLink state of link {link} not read: {state}")
            break
        if not state:
            continue
        counters = {name: _int(nvml.query("nvmlDeviceGetNvLinkErrorCounter", h, link, code))
                    for name, code in _NVLINK_COUNTERS}
        links.append(NvLinkErrors(link=link, **counters))
    return links


def _row_remap(nvml: Nvml, h: Any) -> Any:
    rows = nvml.query("nvmlDeviceGetRemappedRows", h)  # (correctable, uncorrectable, pending, failure)
    if is_absent(rows):
        return rows
    if not (isinstance(rows, (tuple, list)) and len(rows) >= 4):
        return Unknown(f"nvmlDeviceGetRemappedRows: unexpected answer {rows!r}")
    remap = RowRemap(correctable=int(rows[0]), uncorrectable=int(rows[1]), pending=bool(rows[2]), failed=bool(rows[3]))
    hist = nvml.query("nvmlDeviceGetRowRemapperHistogram", h)
    if is_absent(hist):
        remap.histogram = hist
    else:
        try:
            remap.histogram = {k: int(getattr(hist, k)) for k in ("max", "high", "partial", "low", "none")}
        except (AttributeError, TypeError, ValueError):
            remap.histogram = Unknown(f"nvmlDeviceGetRowRemapperHistogram: unexpected answer {hist!r}")
    return remap


# --- Xids from the kernel log -----------------------------------------------------------------


def pci_key(bus_id: str) -> str:
    """'0000:3b:00.0' or '00000000:3B:00' -> '0000:3b:00' (the kernel log names domain:bus:device)."""
    m = re.match(r"([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})", bus_id.strip())
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}" if m else bus_id.lower()


def parse_xids(text: str) -> Dict[str, List[Xid]]:
    """Every `NVRM: Xid (PCI:...): CODE, ...` line of a kernel log, by the GPU's PCI address."""
    out: Dict[str, List[Xid]] = {}
    for line in text.splitlines():
        m = _XID.search(line)
        if m:
            out.setdefault(pci_key(m.group(1)), []).append(Xid(code=int(m.group(2)), text=m.group(3).strip()[:300]))
    return out


def read_kernel_xids(ctx: ProbeContext) -> Tuple[KernelXids, Any]:
    """(Xids by PCI address, 'kmsg' | 'dmesg'), or (Unknown(why the kernel log is unreadable), Unknown)."""
    text, why = _read_kmsg(ctx)
    if text is not None:
        return parse_xids(text), "kmsg"
    dmesg = ctx.which("dmesg")
    if dmesg is None:
        reason = f"kernel log not readable ({why}; no dmesg)"
        return Unknown(reason), Unknown(reason)
    res = run_command([dmesg], min(10.0, ctx.timeout / 2), env=dict(ctx.env))
    if res.ok:
        return parse_xids(res.stdout), "dmesg"
    reason = f"kernel log not readable ({why}; dmesg: {res.describe()})"
    return Unknown(reason), Unknown(reason)


def _read_kmsg(ctx: ProbeContext) -> Tuple[Any, str]:
    """The whole kernel ring buffer from /dev/kmsg, read without blocking at its end."""
    path = ctx.path("/dev/kmsg")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return None, f"/dev/kmsg: {exc.strerror or exc}"
    chunks: List[bytes] = []
    size = overwritten = 0
    try:
        while size < _KERNEL_LOG_BYTES and overwritten < 1000:
            try:
                record = os.read(fd, 8192)  # one record per read on the real device
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # a record was overwritten while reading: skip on
                    overwritten += 1
                    continue
                return None, f"/dev/kmsg: {exc.strerror or exc}"
            if not record:
                break
            chunks.append(record)
            size += len(record)
    finally:
        os.close(fd)
    if size >= _KERNEL_LOG_BYTES or overwritten >= 1000:  # cut short: an Xid may be in what was not read
        return None, f"/dev/kmsg: read only in part ({size} bytes, {overwritten} records overwritten while reading)"
    return b"".join(chunks).decode("utf-8", errors="replace"), ""

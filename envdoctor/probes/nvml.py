"""The one gateway to NVML (nvidia-ml-py).

Initialised once under a lock; every call goes through `query`, which tries versioned entry points
in order, maps NVML errors to `Unavailable` / `ProbeFailed`, decodes bytes, and remembers each
function that this nvidia-ml-py or this driver lacks, so the report can say so once.
"""

from __future__ import annotations

import threading
from typing import Any, Optional, Sequence, Set, Union

from envdoctor.snapshot import ProbeFailed, Unavailable

# nvmlReturn_t values (nvml.h); kept here so a fake library needs only the functions.
ERROR_NOT_SUPPORTED = 3
ERROR_NO_PERMISSION = 4
ERROR_NOT_FOUND = 6
ERROR_DRIVER_NOT_LOADED = 9
ERROR_LIBRARY_NOT_FOUND = 12
ERROR_FUNCTION_NOT_FOUND = 13
ERROR_GPU_IS_LOST = 15

_UNAVAILABLE = {
    ERROR_NOT_SUPPORTED: "not supported on this GPU",
    ERROR_NO_PERMISSION: "no permission",
    ERROR_NOT_FOUND: "not found",
}


class Nvml:
    def __init__(self, lib: Any = None) -> None:
        self._lib = lib
        self._lock = threading.Lock()
        self._state: Optional[Union[bool, Unavailable, ProbeFailed]] = None
        self.missing: Set[str] = set()

    def init(self) -> Optional[Union[Unavailable, ProbeFailed]]:
        """None when NVML is ready; otherwise why it is not (library missing, driver not loaded...)."""
        with self._lock:
            if self._state is None:
                self._state = self._init()
            return None if self._state is True else self._state  # type: ignore[return-value]

    def _init(self) -> Union[bool, Unavailable, ProbeFailed]:
        if self._lib is None:
            try:
                import pynvml  # nvidia-ml-py
            except ImportError:
                return Unavailable("nvidia-ml-py is not installed")
            self._lib = pynvml
        try:
            self._lib.nvmlInit()
        except Exception as exc:
            code = getattr(exc, "value", None)
            if code == ERROR_LIBRARY_NOT_FOUND:
                return Unavailable("NVML library (libnvidia-ml.so) not found: no NVIDIA driver installed")
            if code == ERROR_DRIVER_NOT_LOADED:
                return Unavailable("the NVIDIA kernel driver is not loaded")
            if code == ERROR_NO_PERMISSION:
                return Unavailable("no permission to open the NVIDIA device nodes")
            return ProbeFailed(f"nvmlInit: {_text(exc)}")
        return True

    def shutdown(self) -> None:
        with self._lock:
            if self._state is True:
                try:
                    self._lib.nvmlShutdown()
                except Exception:
                    pass
            self._state = None

    def query(self, names: Union[str, Sequence[str]], *args: Any) -> Any:
        """Call the first of `names` that exists; an NVML error becomes a marker, never an exception."""
        if isinstance(names, str):
            names = (names,)
        for name in names:
            fn = getattr(self._lib, name, None)
            if fn is None:
                self.missing.add(name)
                continue
            try:
                return _decode(fn(*args))
            except Exception as exc:
                code = getattr(exc, "value", None)
                if code == ERROR_FUNCTION_NOT_FOUND:
                    self.missing.add(name)
                    continue
                if code in _UNAVAILABLE:
                    return Unavailable(f"{name}: {_UNAVAILABLE[code]}")
                if code == ERROR_GPU_IS_LOST:
                    return ProbeFailed(f"{name}: GPU is lost (fell off the bus)")
                return ProbeFailed(f"{name}: {_text(exc)}")
        return Unavailable(f"{' / '.join(names)} missing in this driver or nvidia-ml-py")


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _text(exc: BaseException) -> str:
    try:
        return str(exc) or type(exc).__name__
    except Exception:  # some NVMLError str() implementations call back into the library
        return type(exc).__name__

"""A stand-in for the nvidia-ml-py module that replays recorded NVML answers (tests/probes/nvml_recorded/*.json).

Only the library is replaced: envdoctor's NVML gateway and probes run unchanged on top. A recording holds,
for the system and for each device, each function's answer:

- a plain value (a list is returned as a tuple, as pynvml returns them);
- `{"struct": {...}}`: a ctypes structure's fields, returned as attributes;
- `{"error": CODE}`: the call raises NVMLError(CODE) (3 NOT_SUPPORTED, 13 FUNCTION_NOT_FOUND, ...);
- `{"by_args": {"ARGS": answer, ...}, "default": answer}`: by the arguments after the handle, comma-joined.

A function a recording does not name is absent from the module, as in an nvidia-ml-py older than it.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict

HERE = Path(__file__).parent / "nvml_recorded"


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


class RecordedNvml:
    def __init__(self, name: str) -> None:
        self.recording: Dict[str, Any] = json.loads((HERE / f"{name}.json").read_text())
        self.calls: list = []

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("nvml"):
            raise AttributeError(name)
        if name in ("nvmlInit", "nvmlShutdown"):
            return lambda: None
        if name == "nvmlDeviceGetCount":
            return lambda: len(self.recording["devices"])
        if name == "nvmlDeviceGetHandleByIndex":
            return lambda i: SimpleNamespace(index=i)
        system = self.recording.get("system", {})
        if name in system:
            return lambda *args: self._answer(name, system[name], args)
        if any(name in d for d in self.recording["devices"]):
            def call(handle: Any, *args: Any) -> Any:
                device = self.recording["devices"][handle.index]
                if name not in device:
                    raise NVMLError(3)  # recorded on another GPU of the machine: this one does not support it
                return self._answer(name, device[name], args)
            return call
        raise AttributeError(name)

    def _answer(self, name: str, answer: Any, args: tuple) -> Any:
        self.calls.append((name, args))
        if isinstance(answer, dict) and "by_args" in answer:
            key = ",".join(str(a) for a in args)
            answer = answer["by_args"].get(key, answer.get("default", {"error": 2}))
        if isinstance(answer, dict) and "error" in answer:
            raise NVMLError(int(answer["error"]))
        if isinstance(answer, dict) and "struct" in answer:
            return SimpleNamespace(**{k: v.encode() if isinstance(v, str) else v for k, v in answer["struct"].items()})
        if isinstance(answer, list):
            return tuple(answer)
        return answer

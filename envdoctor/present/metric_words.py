"""A self-test's measured numbers as a reader sees them: `busbw_gbps.1048576 = 12.3` is "bus bandwidth at 1 MiB" and
"12.3 GB/s" (the TUI's Self-tests detail). The metrics' keys stay the JSON's."""

from __future__ import annotations

import re
from typing import Tuple

from envdoctor.byte_sizes import format_bytes

# unit suffix of a key -> how its value is written
_UNITS = (("_gbps", "GB/s"), ("_seconds", "s"), ("_bytes", "bytes"))
_WORDS = {"busbw": "bus bandwidth", "algbw": "algorithm bandwidth", "rel": "relative", "diff": "difference",
          "max": "largest", "gpu": "GPU", "gpus": "GPUs", "nccl": "NCCL", "numa": "NUMA", "pg": "process group",
          "nproc": "processes", "ptx": "PTX", "cuda": "CUDA", "deepspeed": "DeepSpeed"}
_INDEX = re.compile(r"\[(\d+)\]$")


def _words(part: str) -> str:
    return " ".join(_WORDS.get(w, w) for w in part.split("_") if w)


def metric_label(key: str) -> Tuple[str, str]:
    """(label, unit) of a flattened metric key: 'busbw_gbps.1048576' -> ('bus bandwidth at 1 MiB', 'GB/s');
    'step_seconds' -> ('step', 's'). unit is '' when the key names none."""
    unit, words = "", []
    for part in key.split("."):
        index = _INDEX.search(part)
        part = _INDEX.sub("", part)
        if part.isdigit():
            words.append(f"at {format_bytes(int(part), exact=True) if int(part) % 1024 == 0 else format_bytes(int(part))}")
            continue
        for suffix, name in _UNITS:
            if part.endswith(suffix) and len(part) > len(suffix):
                part, unit = part[: -len(suffix)], name
                break
        words.append(_words(part) + (f" #{index.group(1)}" if index else ""))
    return " ".join(w for w in words if w), unit


def metric_value(value: object, unit: str) -> str:
    """The value with its unit: 12.34 GB/s, 0.0123 s, 1.5 GiB; words and flags as they are."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-" if value is None else str(value)
    if unit == "bytes":
        return format_bytes(value, digits=1) if value >= 1024 else format_bytes(value)
    text = f"{value:.4g}" if isinstance(value, float) else str(value)
    return f"{text} {unit}" if unit else text

"""A GPU's compute capability from its name, for reports that name a GPU but not its capability (nvidia-smi,
collect_env and ComfyUI never print it). Read from NVIDIA's table of CUDA GPUs
(https://developer.nvidia.com/cuda-gpus) and the architecture pages it links; a name no pattern here matches
gets none (unknown), and every capability filled this way is said to be derived (`ReportFacts.derived`).

Patterns run in order, the more specific first ("RTX 4000 Ada" is Ada, "Quadro RTX 4000" Turing, "RTX A4000"
Ampere).
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

SOURCE = "https://developer.nvidia.com/cuda-gpus"
_TABLE: Tuple[Tuple[str, str], ...] = (
    (r"\bG?B300\b", "10.3"),
    (r"\bG?B[12]00\b", "10.0"),
    (r"\bGB10\b|DGX Spark", "12.1"),
    (r"RTX 50[5-9]0|RTX PRO \d{4}\b.*Blackwell", "12.0"),
    (r"\bG?H(100|200|800|20)\b", "9.0"),
    (r"\bAda\b|RTX 40[5-9]0|\bL4\b|\bL40S?\b|\bL20\b", "8.9"),
    (r"\bA(100|800|30)\b", "8.0"),
    (r"\bOrin\b", "8.7"),
    (r"RTX A\d{4}|RTX 30[5-9]0|\bA(10G?|40|16|2|2000|4000|4500|5000|5500|6000)\b", "8.6"),
    (r"Quadro RTX|TITAN RTX|RTX 20[6-8]0|GTX 16[5-6]0|\bT4\b|\bT(400|500|550|600|1000|1200|2000)\b", "7.5"),
    (r"\bXavier\b", "7.2"),
    (r"V100|TITAN V\b|Quadro GV100", "7.0"),
    (r"P100|Quadro GP100", "6.0"),
    (r"GTX 10[5-8]0|GT 1030|TITAN Xp|TITAN X \(Pascal\)|\bP(4|6|40)\b|Quadro P\d{3,4}\b", "6.1"),
    (r"GTX 9[5-8]0\b|\bM(40|60)\b", "5.2"),
    (r"GTX 750|\bM10\b", "5.0"),
    (r"\bK80\b", "3.7"),
    (r"\bK(20|40)\w*\b|GTX 780|GT 710", "3.5"),
    (r"GTX (680|670|770|760)\b|\bK10\b", "3.0"),
    (r"GeForce 210\b|GeForce GT 2[24]0\b", "1.2"),
)
_COMPILED = tuple((re.compile(p), cc) for p, cc in _TABLE)


def capability_of(name: str) -> Optional[str]:
    """The compute capability NVIDIA's table gives a GPU of this name ("8.9" for "NVIDIA GeForce RTX 4090"), or
    None when the name matches no entry (a name cut short, a GPU this table does not know)."""
    if "..." in name or "\u2026" in name:
        return None  # nvidia-smi cut the name: it may be another model
    for pattern, cc in _COMPILED:
        if pattern.search(name):
            return cc
    return None

"""vLLM's `collect_env`: torch's report (envdoctor/text/collect_env.py reads it) plus vLLM's own keys, in either of
its layouts (torch's "Key: value" lines, or groups framed by "=====" banners with "Key   : value" lines).

    vLLM Version: 0.8.5.post1           python.packages.vllm (partial), extensions[vllm].version
    vLLM Build Flags: / CUDA Archs: ... (read past: it states how vLLM was built, not what is installed)
    GPU Topology: (read past; envdoctor's topology comes from its own probe)
    NCCL_CUMEM_ENABLE=0 ...             env (partial: vLLM prints only the variables it reads); secret-named
                                        variables are never recorded (envdoctor.redact.env_value)
"""

from __future__ import annotations

import re
from typing import Any, Optional

from envdoctor.redact import REDACTED, env_value
from envdoctor.text.facts import Statements, not_read
from envdoctor.text.lines import extension_of_package

KIND = "vllm_env"
KEYS = frozenset(("vllm version", "vllm build flags", "rocm version", "neuron sdk version", "aphrodite version"))
ENV_WHY = "vLLM's collect_env prints only the variables vLLM reads"
_ENV = re.compile(r"^([A-Z][A-Z0-9_]{1,80})=(.*)$")


def key(facts: Statements, name: str, value: str, line: str, no: int) -> Optional[str]:
    """Record a vLLM key; the reader state that follows it ("flags": indented lines continue it)."""
    if name == "vllm build flags":
        return "flags"
    if name == "vllm version" and value and not not_read(value):
        version = value.split()[0]
        if version[:1].isdigit():
            facts.package("python.packages", "vllm", version, line, no)
            facts.partial("python.packages", "collect_env lists only the packages that match its filter")
            extension_of_package(facts, "vllm", version, line, no)
    return None


def env_line(reader: Any, line: str, no: int) -> bool:
    """An environment variable line of vLLM's report (only once the report is known to be vLLM's)."""
    if reader.kind != KIND:
        return False
    m = _ENV.match(line.strip())
    if not m:
        return False
    name, value = m.group(1), env_value(m.group(1), m.group(2).strip())
    shown = line if value != REDACTED else f"{name}={REDACTED}"
    reader.facts.state(f"env.{name}", value, shown, no)
    reader.facts.partial("env", ENV_WHY)
    return True


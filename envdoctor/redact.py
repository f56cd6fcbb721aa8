"""Removing secrets (always) and identifying details (for shared reports) from text and env values."""

from __future__ import annotations

import re
from typing import Dict, Iterable, Mapping

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSW|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)", re.I)
_SECRET_VALUE = (
    # Well-known token shapes, wherever they stand.
    re.compile(r"\b(hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|"
               r"sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,}|"
               r"pypi-[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"),
    # NAME=value, NAME: value and "NAME": "value" where NAME says it is secret (HF_TOKEN=..., "WANDB_API_KEY": "...").
    # The value stops at a quote, space or separator, so JSON stays valid.
    re.compile(r"(?i)([A-Za-z0-9_]*(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|credential)(?:_[A-Za-z0-9]+)*"
               r"[\"']?\s*[=:]\s*[\"']?)(?!<redacted>)([^\s\"'&;,]+)"),
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"),
)
# scheme://user:password@host: everything up to the last '@' before the host (passwords may hold '@').
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s\"'<>]*@")

# Environment variables worth recording: they change how CUDA, NCCL, torch and DeepSpeed behave.
ENV_PREFIXES = ("CUDA_", "NCCL_", "TORCH_", "PYTORCH_", "NVIDIA_", "CUDNN_", "DS_", "GLOO_", "UCX_",
                "FI_", "TORCHINDUCTOR_", "TRITON_", "NV_", "OMPI_", "PMIX_", "SLURM_JOB_GPUS", "HIP_", "ROCR_")
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "MASTER_ADDR",
             "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS",
             "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "ENVDOCTOR_TORCH_INDEX", "CC", "CXX",
             "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE")


def scrub_secrets(text: str) -> str:
    """Secrets never leave the machine: tokens, passwords, credentials inside URLs."""
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _SECRET_VALUE[0].sub(REDACTED, text)
    text = _SECRET_VALUE[1].sub(lambda m: m.group(1) + REDACTED, text)
    return _SECRET_VALUE[2].sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def env_value(name: str, value: str) -> str:
    """An environment value as it may be shown: secret-named variables never are."""
    return REDACTED if _SECRET_NAME.search(name) else scrub_secrets(value)


def relevant_env(environ: Mapping[str, str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name in sorted(environ):
        if not (name.startswith(ENV_PREFIXES) or name in ENV_NAMES):
            continue
        out[name] = env_value(name, environ[name])
    return out


def scrub_identity(text: str, hostnames: Iterable[str] = (), users: Iterable[str] = ()) -> str:
    """For shared reports: host names, user names, home paths, IP and MAC addresses."""
    for name in sorted({h for h in hostnames if h and len(h) > 1}, key=len, reverse=True):
        text = re.sub(re.escape(name), "<host>", text, flags=re.I)
    for user in sorted({u for u in users if u and len(u) > 1}, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(user)}\b", "<user>", text)
    text = re.sub(r"/(home|Users)/[^/\s\"']+", r"/\1/<user>", text)
    text = re.sub(r"\b(?:\d{1,3}\.){3}\d{1,3}\b", "<ip>", text)
    text = re.sub(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b", "<mac>", text)
    text = re.sub(r"(?i)\b(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}\b", "<ip6>", text)
    return text

"""The probe context for a target interpreter and a deadline, as the CLI and the TUI ask for it."""

from __future__ import annotations

from typing import Optional

from envdoctor.probes.base import ProbeContext

DEFAULT_TIMEOUT = 20.0  # every probe but torch's


def probe_context(python: str, timeout: Optional[float], torch_timeout: float) -> ProbeContext:
    """`timeout` (--timeout) bounds the torch probe and, at most DEFAULT_TIMEOUT, the others; None: the torch
    probe gets `torch_timeout` (Settings.torch_timeout)."""
    ctx = ProbeContext(python=python)
    if timeout is not None:
        ctx.torch_timeout = timeout
        ctx.timeout = min(DEFAULT_TIMEOUT, timeout)
    else:
        ctx.torch_timeout = torch_timeout
    return ctx

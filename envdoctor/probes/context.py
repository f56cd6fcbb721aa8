"""The interpreter to probe (`--python`) and the probe context for it and a deadline, as the CLI and the TUI
ask for them."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Optional

from envdoctor.errors import InputError
from envdoctor.probes.base import ProbeContext
from envdoctor.processes import run_command

DEFAULT_TIMEOUT = 20.0  # every probe but torch's


def probe_context(python: str, timeout: Optional[float], torch_timeout: float,
                  state_root: Optional[Path] = None) -> ProbeContext:
    """`timeout` (--timeout) bounds the torch probe and, at most DEFAULT_TIMEOUT, the others; None: the torch
    probe gets `torch_timeout` (Settings.torch_timeout). `state_root`: where interrupted fixes are found."""
    ctx = ProbeContext(python=python, state_root=state_root)
    if timeout is not None:
        ctx.torch_timeout = timeout
        ctx.timeout = min(DEFAULT_TIMEOUT, timeout)
    else:
        ctx.torch_timeout = torch_timeout
    return ctx


def target_python(value: Optional[str]) -> str:
    """The interpreter `--python VALUE` names, checked, as an absolute path; None: this one.

    A value with a slash (`./python`, `venv/bin/python`) or a folder (an environment) is a path, resolved
    against the current directory; a bare name (`python3.12`) is looked up on PATH, as a shell would."""
    if value is None:
        return sys.executable
    if not value.strip():
        raise InputError("--python '': an empty interpreter path (leave --python out for this interpreter)")
    has_slash = os.sep in value or bool(os.altsep and os.altsep in value)
    if has_slash or os.path.isdir(value):
        path = Path(os.path.abspath(value))
    else:
        found = shutil.which(value)
        if found is None:
            raise InputError(f"--python {value}: no such interpreter (not a path, and not on PATH)")
        path = Path(os.path.abspath(found))
    if path.is_dir():
        for cand in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if cand.exists():
                return str(cand)
    if not path.exists():
        raise InputError(f"--python {value}: no such interpreter")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise InputError(f"--python {value}: not an executable file")
    res = run_command([str(path), "-c", "import sys; print('envdoctor-python', sys.version_info[0])"], timeout=30)
    if not res.ok or "envdoctor-python 3" not in res.stdout:
        raise InputError(f"--python {value}: not a Python 3 interpreter ({res.describe() if not res.ok else 'wrong output'})")
    return str(path)

"""Fetch the wheels that tests/probes/test_broken_envs.py builds real broken environments from.

    python tools/fetch_test_wheels.py [DIR]

Uses pip's own configuration (so a mirror or a local wheel cache is honoured) and writes DIR/.complete
(the list of wheels) when every wheel is there. DIR defaults to $ENVDOCTOR_TEST_WHEELHOUSE, else envdoctor-test-wheels in the
temp directory: where the tests look. The tests themselves never reach a package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

TORCH = "torch==2.13.0+cpu"
LOOSE = ("torchvision==0.28.0", "torchvision==0.29.0", "sympy==1.12", "numpy==1.26.0", "pillow==13.0.0",
         "triton==3.6.0")  # installed one at a time, without dependencies


def default_dir() -> Path:
    return Path(os.environ.get("ENVDOCTOR_TEST_WHEELHOUSE") or Path(tempfile.gettempdir()) / "envdoctor-test-wheels")


def main(argv: list) -> int:
    d = Path(argv[0]) if argv else default_dir()
    done = d / ".complete"
    wanted = " ".join([TORCH, *LOOSE]) + "\n"
    if done.exists() and done.read_text() == wanted:  # another list (an older one): fetch what is missing
        return 0
    d.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "-q", "-d", str(d)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for args in ([TORCH], *(["--no-deps", pin] for pin in LOOSE)):  # one at a time: two torchvision releases
        res = subprocess.run(pip + args, capture_output=True, text=True, env=env, timeout=900)
        if res.returncode != 0:
            print(f"fetch_test_wheels: cannot fetch {' '.join(args)}: {res.stderr.strip()[-300:]}", file=sys.stderr)
            return 1
    done.write_text(wanted)
    print(f"fetch_test_wheels: wheels in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

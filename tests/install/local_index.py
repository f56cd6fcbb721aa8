"""A folder of wheels served as a PEP 503 index on 127.0.0.1 (torch at /whl/cpu/torch/, the rest at /simple/), and a
venv holding the real torch from it: what the real-venv install tests share."""

from __future__ import annotations

import hashlib
import http.server
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator, Mapping, Optional

from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.test_install import clean_env, write_page
from tools.fetch_test_wheels import TORCH


def serve_wheelhouse(root: Path, wheelhouse: Path, torch_index: Optional[Mapping[str, str]] = None) -> Iterator[str]:
    """Serve `wheelhouse` from `root` until the generator is closed; yields the index's base URL. `torch_index`:
    the packages served only at the torch index, each at /whl/<variant>/<name>/ (torch at cpu)."""
    torch_index = {"torch": "cpu"} if torch_index is None else torch_index
    (root / "files").symlink_to(wheelhouse)
    by_name: dict = {}
    for whl in sorted(wheelhouse.glob("*.whl")):
        digest = hashlib.sha256(whl.read_bytes()).hexdigest()
        by_name.setdefault(canonicalize_name(parse_wheel_filename(whl.name)[0]), []).append(
            (f"/files/{whl.name.replace('+', '%2B')}#sha256={digest}", whl.name))
    for name, links in by_name.items():
        if name in torch_index:
            write_page(root / "whl" / torch_index[name] / name, links)
        else:
            write_page(root / "simple" / name, links)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def torch_venv(d: Path, wheelhouse: Path) -> Path:
    """A new venv at `d` with the test wheels' torch installed (no index: the wheel folder only)."""
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheelhouse),
                    TORCH], check=True, env=clean_env(), capture_output=True, timeout=900)
    return d

"""A package registry on 127.0.0.1 for the refresh tests: recorded pages, .metadata files and wheels that
answer HTTP Range requests, with every request logged (path, Range header, bytes sent)."""

from __future__ import annotations

import io
import re
import threading
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Tuple

from tests.conftest import ROOT

RECORDED = ROOT / "tests" / "data" / "registry"


def wheel_bytes(metadata: bytes, version_py: bytes, dist: str = "torch-2.15.0", padding: int = 6 << 20) -> bytes:
    """A zip laid out like a torch wheel: a big library first (incompressible, stored), then the small members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("torch/lib/libtorch_cuda.so"), bytes(range(256)) * (padding // 256),
                   compress_type=zipfile.ZIP_STORED)
        for i in range(300):  # a long central directory, as torch's 13,000 members give
            z.writestr(f"torch/include/header_{i:04d}.h", f"// {i}\n", compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("torch/version.py", version_py, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(f"{dist}.dist-info/METADATA", metadata, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(f"{dist}.dist-info/RECORD", b"", compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


class Registry:
    """`files`: path -> bytes served; `log`: (path, Range header or None, bytes sent) per request."""

    def __init__(self, files: Dict[str, bytes]) -> None:
        self.files = files
        self.log: List[Tuple[str, object, int]] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = urllib.parse.unquote(self.path.split("?", 1)[0])
                body = registry.files.get(path)
                rng = self.headers.get("Range")
                if body is None:
                    registry.log.append((path, rng, 0))
                    self.send_error(404)
                    return
                status, start, end = 200, 0, len(body) - 1
                m = re.match(r"^bytes=(\d*)-(\d*)$", rng or "")
                if m:
                    status = 206
                    if m.group(1) == "":
                        start = max(0, len(body) - int(m.group(2)))
                    else:
                        start, end = int(m.group(1)), min(end, int(m.group(2) or end))
                chunk = body[start:end + 1]
                self.send_response(status)
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
                self.send_header("Content-Length", str(len(chunk)))
                self.end_headers()
                # logged before it is sent: a client that has read it may be asked about it at once
                registry.log.append((path, rng, len(chunk)))
                self.wfile.write(chunk)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Registry:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent(self, path: str) -> int:
        return sum(n for p, _r, n in self.log if p == path)

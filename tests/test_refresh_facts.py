"""tools/refresh_facts.py against a recorded registry on 127.0.0.1: the JSON API page, a PEP 658 .metadata file,
wheels read through Range requests (never whole), the PyTorch index's per-variant page, the comparison with
RELEASE.md-derived facts and the rule that a verified fact never changes silently."""

from __future__ import annotations

import copy
import importlib.util
import json
import urllib.parse

import pytest

from envdoctor.wheels.ranged_zip import RangedZip
from tests.conftest import ROOT
from tests.registry_server import RECORDED, Registry, wheel_bytes

X86 = "torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl"
WIN = "torch-2.15.0-cp311-cp311-win_amd64.whl"
CU132 = "torch-2.15.0+cu132-cp311-cp311-manylinux_2_28_x86_64.whl"


def tool():
    spec = importlib.util.spec_from_file_location("refresh_facts", ROOT / "tools" / "refresh_facts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def recorded_registry(pep658_for_windows: bool = True):
    """The recorded JSON API page of torch 2.15.0 and what its links point at."""
    page = json.loads((RECORDED / "pypi-torch-2.15.0.json").read_text())
    meta = (RECORDED / "torch-2.15.0-linux_x86_64.METADATA").read_bytes()
    files = {}
    for f in page["releases"]["2.15.0"]:
        path = urllib.parse.urlsplit(urllib.parse.urljoin("http://h/pypi/torch/json", f["url"])).path
        label = "cpu" if "win" in f["filename"] else "cu132"
        version_py = (RECORDED / f"torch-2.15.0-{'win_amd64' if label == 'cpu' else 'linux_x86_64'}.version.py")
        files[path] = wheel_bytes(meta, version_py.read_bytes())
        if f["filename"] == WIN and pep658_for_windows:
            f["core_metadata"] = {"sha256": "00"}
            files[path + ".metadata"] = meta
    files["/pypi/torch/json"] = json.dumps(page).encode()
    cu132_meta = meta.replace(b"\nVersion: 2.15.0\n", b"\nVersion: 2.15.0+cu132\n")
    files["/whl/cu132/torch/"] = (f'<a href="/whl/{CU132.replace("+", "%2B")}#sha256=00" '
                                  f'data-dist-info-metadata="sha256=00">{CU132}</a>\n').encode()
    files[f"/whl/{CU132}.metadata"] = cu132_meta
    files["/whl/cu132/torch"] = files["/whl/cu132/torch/"]
    return files


def matrix_with(cudnn: str) -> dict:
    matrix = json.loads((ROOT / "facts" / "matrix.json").read_text())
    m214 = next(r for r in matrix["torch_releases"] if r["version"] == "2.14")
    m215 = copy.deepcopy(m214)
    m215.update(version="2.15", python=["3.11", "3.12", "3.13", "3.14"], pypi_default_linux_x86_64="cu132")
    m215["variants"]["cu132"]["cudnn"] = cudnn
    matrix["torch_releases"].append(m215)
    return matrix


def run(tmp_path, reg, *extra, matrix=None):
    (tmp_path / "matrix.json").write_text(json.dumps(matrix or matrix_with("9.26.0.51")))
    argv = ["--registry", f"{reg.url}/pypi", "--torch-index", f"{reg.url}/whl", "--variants", "cu132",
            "--facts", str(tmp_path / "registry.json"), "--matrix", str(tmp_path / "matrix.json"),
            "--index", str(ROOT / "wheels_index.json"), "--today", "2026-12-02", *extra]
    return tool().main(argv)


def test_range_reads_fetch_a_small_part_of_a_wheel_without_pep658_metadata(tmp_path):
    with Registry(recorded_registry()) as reg:
        assert run(tmp_path, reg) == 0
        doc = json.loads((tmp_path / "registry.json").read_text())
        x86 = doc["releases"]["2.15.0"]["platforms"]["linux_x86_64"]
        path = next(p for p in reg.files if p.endswith(X86))
        size = len(reg.files[path])
        assert x86["read_by"].startswith("range requests") and reg.sent(path) == x86["bytes_read"]
        assert x86["bytes_read"] < size / 20  # the tail, the central directory and two members, not the wheel
        assert all(rng for p, rng, _n in reg.log if p == path)  # every request for the wheel was a Range request
    assert x86["variant"] == "cu132" and x86["cuda"] == "13.2" and x86["variant_read_from"] == "torch/version.py"
    assert (x86["cuda_toolkit"], x86["cudnn"], x86["nccl"], x86["nvshmem"], x86["triton"]) == \
        ("13.2.2", "9.26.0.51", "2.30.7", "3.7.2", "~=3.9.0")
    assert x86["requires_python"] == ">=3.11" and x86["pythons"] == ["3.11", "3.14t"]
    assert x86["read_from"] == f"registry metadata, {X86}, 2026-12-02" and x86["status"] == "verified"


def test_pep658_metadata_is_used_where_served_and_markers_are_evaluated(tmp_path):
    with Registry(recorded_registry()) as reg:
        assert run(tmp_path, reg) == 0
        wheel = next(p for p in reg.files if p.endswith(WIN))
        assert reg.sent(wheel + ".metadata") > 0
        # METADATA pins nothing on Windows, so the build is read from torch/version.py, by Range requests only
        assert 0 < reg.sent(wheel) < len(reg.files[wheel]) / 20 and all(r for p, r, _n in reg.log if p == wheel)
    win = json.loads((tmp_path / "registry.json").read_text())["releases"]["2.15.0"]["platforms"]["win_amd64"]
    assert win["read_by"] == "PEP 658 metadata + torch/version.py by range requests"
    assert win["variant"] == "cpu" and win["variant_read_from"] == "torch/version.py"
    # the CUDA pins carry `platform_system == "Linux"`: a Windows wheel pins none of them
    assert not {"cuda_toolkit", "cudnn", "nccl", "triton"} & set(win) and win["requires_python"] == ">=3.11"


def test_the_pytorch_index_page_is_read_per_variant(tmp_path):
    with Registry(recorded_registry()) as reg:
        assert run(tmp_path, reg) == 0
        assert reg.sent(f"/whl/{CU132}.metadata") > 0 and reg.sent(f"/whl/{CU132}") == 0
    idx = json.loads((tmp_path / "registry.json").read_text())["torch_index"]["cu132"]["2.15.0"]["linux_x86_64"]
    assert idx["variant"] == "cu132" and idx["variant_read_from"] == "METADATA version" and idx["cudnn"] == "9.26.0.51"
    assert idx["read_from"] == f"PyTorch index metadata, {CU132}, 2026-12-02"


def test_disagreements_with_release_md_are_listed(tmp_path, capsys):
    with Registry(recorded_registry()) as reg:
        assert run(tmp_path, reg, matrix=matrix_with("9.24.0.43")) == 0
    doc = json.loads((tmp_path / "registry.json").read_text())
    found = [d for d in doc["disagreements"] if d["release"] == "2.15.0"]
    assert {"release": "2.15.0", "fact": "cu132.cudnn (linux_x86_64)", "registry": "9.26.0.51",
            "release_md": "9.24.0.43", "read_from": f"registry metadata, {X86}, 2026-12-02"} in found
    assert "disagrees with RELEASE.md: torch 2.15.0 cu132.cudnn" in capsys.readouterr().err


def test_a_verified_fact_never_changes_silently(tmp_path, capsys):
    with Registry(recorded_registry()) as reg:
        assert run(tmp_path, reg) == 0
        facts = tmp_path / "registry.json"
        doc = json.loads(facts.read_text())
        doc["releases"]["2.15.0"]["platforms"]["linux_x86_64"]["cudnn"] = "9.25.0.1"
        facts.write_text(json.dumps(doc))
        before = facts.read_text()
        assert run(tmp_path, reg) == 1
        assert facts.read_text() == before
        err = capsys.readouterr().err
        assert "VERIFIED FACT DIFFERS: torch 2.15.0 linux_x86_64 cudnn: was '9.25.0.1'" in err and "--accept" in err
        assert run(tmp_path, reg, "--accept") == 0
    assert json.loads(facts.read_text())["releases"]["2.15.0"]["platforms"]["linux_x86_64"]["cudnn"] == "9.26.0.51"


def test_a_server_that_ignores_range_is_refused():
    # A server answering 200 with the whole body: the reader refuses rather than read a whole wheel.
    import http.server
    import threading

    from envdoctor.wheels.ranged_zip import urllib_range_get

    class Whole(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"PK\x03\x04")

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Whole)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with pytest.raises(OSError, match="ignored the Range request"):
            urllib_range_get()(f"http://127.0.0.1:{srv.server_address[1]}/x.whl", -100, -1)
    finally:
        srv.shutdown()
        srv.server_close()


def test_ranged_zip_reads_zip64_and_stored_members():
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", allowZip64=True) as z:
        z.writestr("a.dist-info/METADATA", b"Name: a\n", compress_type=zipfile.ZIP_STORED)
        with z.open(zipfile.ZipInfo("big.bin"), "w", force_zip64=True) as fh:
            fh.write(b"x" * 1000)
    data = buf.getvalue()
    z = RangedZip("mem", lambda url, s, e: data[s:] if s < 0 else data[s:e + 1])
    assert z.read("a.dist-info/METADATA") == b"Name: a\n" and z.read("big.bin") == b"x" * 1000


def test_a_variant_wheel_states_its_properties(tmp_path):
    import io
    import zipfile

    name = "torch-2.16.0-cp311-cp311-manylinux_2_28_x86_64-cu133.whl"
    declared = {"nvidia": {"cuda_version_lower_bound": ["13.3"], "sm_arch": ["90_real", "120_real", "120_virtual"]}}
    variant_json = json.dumps({"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
                               "default-priorities": {"namespace": ["nvidia"]}, "variants": {"cu133": declared}})
    meta = (RECORDED / "torch-2.15.0-linux_x86_64.METADATA").read_bytes().replace(b"Version: 2.15.0", b"Version: 2.16.0")
    buf = io.BytesIO(wheel_bytes(meta, b"__version__ = '2.16.0+cu133'\ncuda: Optional[str] = '13.3'\n",
                                 dist="torch-2.16.0"))
    with zipfile.ZipFile(buf, "a") as z:
        z.writestr("torch-2.16.0.dist-info/variant.json", variant_json)
    page = {"info": {"name": "torch"}, "releases": {"2.16.0": [
        {"filename": name, "url": f"/f/{name}", "size": len(buf.getvalue()), "upload_time": "2026-12-01T00:00:00",
         "yanked": False}]}}
    files = {"/pypi/torch/json": json.dumps(page).encode(), f"/f/{name}": buf.getvalue()}
    with Registry(files) as reg:
        assert run(tmp_path, reg, "--releases", ">=2.16") == 0
    x86 = json.loads((tmp_path / "registry.json").read_text())["releases"]["2.16.0"]["platforms"]["linux_x86_64"]
    assert x86["variant_properties"] == declared and x86["variant_label"] == "cu133"
    assert x86["sm"] == ["sm_90", "sm_120"] and x86["ptx"] == ["compute_120"] and x86["variant"] == "cu133"


def _zip_with(member: bytes, name: str = "a.dist-info/METADATA") -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, member, compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _served(data: bytes):
    return lambda url, s, e: data[s:] if s < 0 else data[s:e + 1]


def test_ranged_zip_refuses_a_member_that_inflates_past_its_stated_size():
    import struct

    from envdoctor.wheels import ranged_zip

    data = bytearray(_zip_with(b"\0" * 100_000))
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24:cd + 28] = struct.pack("<I", 10)  # the directory claims 10 bytes; the stream inflates to 100,000
    z = RangedZip("mem", _served(bytes(data)))
    with pytest.raises(ranged_zip.NotAZip, match="inflates past its stated size"):
        z.read("a.dist-info/METADATA")


def test_ranged_zip_refuses_sizes_past_its_caps(monkeypatch):
    from envdoctor.wheels import ranged_zip

    data = _zip_with(b"x" * 5000)
    monkeypatch.setattr(ranged_zip, "MAX_MEMBER", 1000)
    with pytest.raises(ranged_zip.NotAZip, match="more than the 1000 read"):
        RangedZip("mem", _served(data)).read("a.dist-info/METADATA")
    monkeypatch.setattr(ranged_zip, "MAX_DIRECTORY", 10)
    with pytest.raises(ranged_zip.NotAZip, match="central directory of"):
        RangedZip("mem", _served(data))


def test_ranged_zip_inflates_no_further_than_one_byte_past_the_stated_size(monkeypatch):
    import zlib

    from envdoctor.wheels import ranged_zip

    asked = []
    real = zlib.decompressobj

    class Spy:
        def __init__(self, *a):
            self.inner = real(*a)

        def decompress(self, data, max_length=0):
            asked.append(max_length)
            return self.inner.decompress(data, max_length)

    monkeypatch.setattr(ranged_zip.zlib, "decompressobj", Spy)
    assert RangedZip("mem", _served(_zip_with(b"y" * 300))).read("a.dist-info/METADATA") == b"y" * 300
    assert asked == [301]

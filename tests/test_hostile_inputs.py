"""Hostile and unlucky inputs end with a clear one-line error (exit 2) and change nothing (issue 11: 8, 9, 14, 15, 18, 19)."""

from __future__ import annotations

import http.server
import json
import os
import pty
import select
import stat
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from envdoctor.errors import InputError
from envdoctor.install.resolve import fetch_page, resolve_versions
from envdoctor.probes import torch_probe
from envdoctor.probes.base import ProbeContext
from envdoctor.snapshot import ProbeFailed
from envdoctor.wheels.index import bundled_path
from tests.conftest import ROOT, fixture_path, run_cli, run_cli_in_process

OFFLINE = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_CONFIG_FILE": os.devnull}


# --- 8: the index fetch -----------------------------------------------------------------------------


@contextmanager
def serving(body):
    """A local HTTP server whose every GET answers through body(handler)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            try:
                body(self)
            except OSError:  # the client went away
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _trickle(h):
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    for _ in range(600):  # one byte every 0.1 s: never idle long enough for the per-read timeout
        h.wfile.write(b"<")
        h.wfile.flush()
        time.sleep(0.1)


def _flood(h):
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.end_headers()
    chunk = b"<a href='x'>x</a>" * 4096
    for _ in range(100_000):
        h.wfile.write(chunk)


def _index_update(tmp_path, base, *extra):
    env = {**OFFLINE, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return run_cli(["index", "update", "--index-base", base, "--timeout", "5", *extra], env=env, timeout=120)


@pytest.mark.slow
@pytest.mark.hostile("exit 2")
def test_index_update_has_an_overall_deadline(tmp_path):
    with serving(_trickle) as url:
        res = _index_update(tmp_path, url + "/whl", "--deadline", "2")
    assert res.returncode == 2 and "within the 2s deadline" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "cache" / "envdoctor" / "wheels_index.json").exists()


@pytest.mark.hostile("exit 2")
def test_index_update_caps_the_page_size(tmp_path):
    with serving(_flood) as url:
        res = _index_update(tmp_path, url + "/whl")
    assert res.returncode == 2 and "larger than 32 MiB" in res.stderr, res.stderr
    assert not (tmp_path / "cache" / "envdoctor" / "wheels_index.json").exists()


@pytest.mark.parametrize("server,deadline,says", [pytest.param(_trickle, 2, "within the 2s deadline", marks=pytest.mark.slow),
                                                  (_flood, 100, "larger than 32 MiB")], ids=["trickle", "flood"])
@pytest.mark.hostile("exit 2", "exit 2")
def test_fix_reads_index_pages_under_the_same_deadline_and_cap(server, deadline, says):
    """The pages `fix` reads for exact versions (resolve_versions) and for link hashes (fetch_page)."""
    with serving(server) as url:
        with pytest.raises(InputError, match=says):
            resolve_versions(url + "/whl", {"torch": ("2.9", "cu126")}, "3.12", "linux_x86_64", timeout=5,
                             deadline=deadline)
        with pytest.raises(InputError, match=says):
            fetch_page(url + "/simple/torch", timeout=5, deadline=deadline)


# --- 9: prompts, state directory, settings, wheel index, snapshot versions --------------------------------


@pytest.mark.slow
@pytest.mark.hostile("exit 2")
def test_ctrl_d_at_the_install_prompt_is_exit_2_and_installs_nothing(tmp_path):
    env = {**os.environ, **OFFLINE, "XDG_CACHE_HOME": str(tmp_path / "cache"), "ENVDOCTOR_INSTALLER": "pip",
           "PIP_NO_INDEX": "1", "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "envdoctor", "fix", "--torch", "2.12",
                             "--index-base", "http://127.0.0.1:9/whl"], cwd=ROOT, env=env,
                            stdin=secondary, stdout=secondary, stderr=subprocess.PIPE)
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 240
    while b"install this plan?" not in seen and time.monotonic() < deadline and proc.poll() is None:
        if select.select([primary], [], [], 1)[0]:
            try:
                seen += os.read(primary, 65536)
            except OSError:
                break
    assert b"install this plan?" in seen, (seen[-300:], proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
    os.write(primary, b"\x04")  # Ctrl-D
    _out, err = proc.communicate(timeout=120)
    os.close(primary)
    assert proc.returncode == 2, err
    assert b"end of input" in err and b"Traceback" not in err
    assert not list((tmp_path / "cache").glob("envdoctor/state/*/wheelhouse"))


@pytest.mark.slow
@pytest.mark.hostile("exit 2", "exit 2")
def test_state_directory_that_is_a_file_is_exit_2_naming_it(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "envdoctor").write_text("not a directory")
    env = {**OFFLINE, "XDG_CACHE_HOME": str(cache), "ENVDOCTOR_INSTALLER": "pip", "PIP_NO_INDEX": "1"}
    res = run_cli(["fix", "--yes", "--torch", "2.12", "--index-base", "http://127.0.0.1:9/whl"], env=env, timeout=300)
    assert res.returncode == 2 and str(cache / "envdoctor") in res.stderr and "Not a directory" in res.stderr, res.stderr
    assert (cache / "envdoctor").read_text() == "not a directory"
    whl = tmp_path / "whl" / "cu126" / "torch"
    whl.mkdir(parents=True)
    (whl / "index.html").write_text("")
    res = run_cli(["index", "update", "--index-base", (tmp_path / "whl").as_uri()], env=env)
    assert res.returncode == 2 and str(cache / "envdoctor") in res.stderr, res.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
@pytest.mark.hostile("exit 2")
def test_state_directory_without_permission_is_exit_2(tmp_path):
    cache = tmp_path / "cache"
    (cache / "envdoctor").mkdir(parents=True)
    os.chmod(cache / "envdoctor", 0o500)
    try:
        env = {**OFFLINE, "XDG_CACHE_HOME": str(cache)}
        res = run_cli(["index", "update", "--index-base", "http://127.0.0.1:9/whl"], env=env)
        assert res.returncode == 2 and "Permission denied" in res.stderr, res.stderr
    finally:
        os.chmod(cache / "envdoctor", 0o700)


@pytest.mark.parametrize("value", ["abc", "nan", "-1", "inf"])
@pytest.mark.hostile("exit 2")
def test_bad_torch_timeout_is_exit_2_naming_the_variable(value):
    res = run_cli(["check", "--snapshot", str(fixture_path("h200_8x_healthy"))], env={"ENVDOCTOR_TORCH_TIMEOUT": value})
    assert res.returncode == 2 and "ENVDOCTOR_TORCH_TIMEOUT" in res.stderr and "Traceback" not in res.stderr


BAD_INDEX_ENTRIES = [
    (("torch", 1, "pypi_default", "linux_x86_64"), 3),
    (("torch", 0, "pypi_default", "linux_aarch64", "variant"), []),
    (("torch", 0, "variants", "cu130", "platforms", "linux_aarch64", "ptx_unverified"), True),
    (("deepspeed", "releases", 1, "version"), 3),
]


def _index_with(where, value):
    data = json.loads(bundled_path().read_text())
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return data


@pytest.mark.parametrize("where,value", BAD_INDEX_ENTRIES, ids=[".".join(map(str, w)) for w, _ in BAD_INDEX_ENTRIES])
@pytest.mark.hostile("exit 2", "handled")
def test_wheel_index_with_wrongly_typed_entries(tmp_path, where, value):
    data = _index_with(where, value)
    path = tmp_path / "index.json"
    path.write_text(json.dumps(data))
    snap = str(fixture_path("h200_8x_healthy"))
    res = run_cli_in_process(["fix", "--snapshot", snap, "--dry-run", "--python", "3.11"],
                             env={"ENVDOCTOR_WHEELS_INDEX": str(path)})
    assert res.returncode == 2 and str(path) in res.stderr and "Traceback" not in res.stderr, res.stderr
    # the same document as the user copy: skipped with a warning, the bundled index plans
    cache = tmp_path / "cache"
    (cache / "envdoctor").mkdir(parents=True)
    data["based_on"] = json.loads(bundled_path().read_text())["generated"]
    (cache / "envdoctor" / "wheels_index.json").write_text(json.dumps(data))
    res = run_cli_in_process(["fix", "--snapshot", snap, "--dry-run", "--python", "3.11"], env={"XDG_CACHE_HOME": str(cache)})
    assert res.returncode == 0 and "ignoring the user copy" in res.stderr, res.stderr


@pytest.mark.parametrize("field", [("torch", "cuda"), ("torch", "version"), ("torch", "hip"), ("deepspeed", "version")])
@pytest.mark.parametrize("value", [".", "+", "abc"])
@pytest.mark.hostile("exit 2", "exit 2")
def test_snapshot_version_that_is_not_a_version_is_exit_2(tmp_path, field, value):
    data = json.loads(fixture_path("h200_8x_healthy").read_text())
    data[field[0]][field[1]] = value
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    for cmd in (["fix", "--snapshot", str(p), "--dry-run"], ["check", "--snapshot", str(p)]):
        res = run_cli_in_process(cmd)
        assert res.returncode == 2 and f"{field[0]}.{field[1]} {value!r} is not a version" in res.stderr, res.stderr


# --- 14: control characters ----------------------------------------------------------------------------

ESC = "\x1b]0;owned\x07\x1b[2J\u202e"


@pytest.mark.hostile("handled", "handled", "handled", "handled", "exit 2")
def test_terminal_escapes_never_reach_human_output(tmp_path):
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["host"]["hostname"] = "node" + ESC
    data["gpus"][0]["name"] = "H100" + ESC
    data["driver"]["version"] = "550.54.15" + ESC
    data["probes"][0]["name"] = "system" + ESC
    data["probes"][0]["error"] = "boom" + ESC
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    other = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    other["host"]["hostname"] = "node-b"
    q = tmp_path / "o.json"
    q.write_text(json.dumps(other))
    log = tmp_path / "job.log"
    log.write_text((ROOT / "tests/fixtures/nccl/shm_exhausted.log").read_text().replace(
        "No space left on device", "No space left on device" + ESC))
    outputs = {
        "check": run_cli(["check", "--snapshot", str(p)]),
        "report": run_cli(["report", "--no-redact", "--snapshot", str(p)]),
        "fleet": run_cli(["fleet", str(p), str(q)]),
        "nccl": run_cli(["nccl", "diagnose", str(log)]),
        "error": run_cli(["check", "--snapshot", str(tmp_path / ("missing" + ESC))]),
    }
    for name, res in outputs.items():
        text = res.stdout + res.stderr
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, name
        assert name == "nccl" or "\\x1b" in text, name  # shown, escaped (nccl clips the evidence line before it)
    assert outputs["error"].returncode == 2


# --- 15: -o FILE ---------------------------------------------------------------------------------------


def _report_to(path):
    return run_cli(["report", "--snapshot", str(fixture_path("h200_8x_healthy")), "-o", str(path)], timeout=60)


@pytest.mark.hostile("handled", "exit 2")
def test_output_to_a_character_device_writes_through(tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    except PermissionError:
        pytest.skip("cannot make device nodes here")
    res = _report_to(node)
    assert res.returncode == 0, res.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full: every write is ENOSPC
    res = _report_to(full)
    assert res.returncode == 2 and "No space left on device" in res.stderr, res.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)


@pytest.mark.hostile("exit 2", "handled")
def test_output_to_a_fifo_writes_through_and_one_without_reader_is_exit_2(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    res = _report_to(fifo)
    assert res.returncode == 2 and "nobody reads" in res.stderr, res.stderr
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    res = _report_to(fifo)
    reader.join(60)
    assert res.returncode == 0, res.stderr
    assert got and got[0].startswith("## envdoctor report")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.hostile("handled", "exit 2")
def test_output_through_a_symlink_keeps_the_link(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert _report_to(link).returncode == 0
    assert link.is_symlink() and target.read_text().startswith("## envdoctor report")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    res = _report_to(tmp_path)
    assert res.returncode == 2 and "is a directory" in res.stderr


# --- 18, 19: torch that is slow, torch that raises without metadata ---------------------------------------


def _fake_torch(tmp_path, body, dist_info=True):
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(body)
    if dist_info:
        info = site / "torch-2.4.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\n")
    return str(site)


@pytest.mark.hostile("handled")
def test_slow_torch_import_is_a_timeout_not_a_broken_torch(tmp_path):
    site = _fake_torch(tmp_path, "import time\ntime.sleep(30)\n")
    res = run_cli(["check", "--json", "--timeout", "0.5", "--python", sys.executable],
                  env={"PYTHONPATH": site + os.pathsep + str(ROOT)}, timeout=120)
    doc = json.loads(res.stdout)
    ids = {f["id"]: f for f in doc["findings"]}
    assert "ED109" not in ids
    timeout = next(f for f in doc["findings"] if f["id"] == "ED213" and "torch" in f["title"])
    assert timeout["severity"] == "warning" and "timed out after 0.5s" in timeout["detail"]


@pytest.mark.hostile("handled")
def test_torch_that_raises_without_metadata_is_broken_not_missing(tmp_path):
    site = _fake_torch(tmp_path, "raise ImportError('undefined symbol: _ZN3c1017RegisterOperators')\n", dist_info=False)
    venv = tmp_path / "venv"  # an interpreter with no torch metadata anywhere: a source build on PYTHONPATH
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = site
    out = torch_probe.probe(ProbeContext(python=str(venv / "bin" / "python"), env=env, torch_timeout=60.0,
                                         timeout=20.0, root=tmp_path))
    t = out.sections["torch"]
    assert not isinstance(t, ProbeFailed) and t.importable is False
    assert "undefined symbol: _ZN3c1017RegisterOperators" in t.error


def test_rocm_hip_version_as_torch_reports_it_is_read(tmp_path):
    data = json.loads(fixture_path("h200_8x_healthy").read_text())
    data["torch"]["hip"] = "5.7.31921-d1770ee1b"  # torch.version.hip on a ROCm 5.7 build: not PEP 440
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    res = run_cli(["check", "--snapshot", str(p), "--json"])
    assert res.returncode in (0, 1), res.stderr
    assert json.loads(res.stdout)["snapshot"]["torch"]["hip"] == "5.7.31921-d1770ee1b"

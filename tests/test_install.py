"""`fix --yes` and `undo` against a real PEP 503 index on 127.0.0.1, in throwaway venvs.

The index serves small fake wheels built here: `torch` whose __init__ reports a version, version.cuda
and cuda.get_arch_list(); `fakedep` stands for torch's dependencies and comes from PIP_INDEX_URL (the
user's pip configuration), torch from --index-base. The machine's own pip configuration (find-links,
constraints, extra indexes) is switched off with PIP_CONFIG_FILE=os.devnull and no PIP_* variables.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from tests.json_schemas import assert_valid

ROOT = Path(__file__).resolve().parents[1]


def build_wheel(out: Path, name: str, version: str, files: dict, requires=(), pad_files: int = 0) -> Path:
    files = dict(files)
    for i in range(pad_files):
        files[f"{name}/pad/f{i}.py"] = f"X = {i}\n" + "#" * 2000 + "\n"
    di = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files[f"{di}/METADATA"] = meta
    files[f"{di}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: envdoctor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = "\n".join(record) + "\n"
    whl = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return whl


def fake_torch(out: Path, version: str, reports: str = None, cuda=None, archs=(), requires=(), pad_files=0) -> Path:
    init = (f"__version__ = {reports or version!r}\n"
            f"class version:\n    cuda = {cuda!r}\n"
            "class cuda:\n"
            f"    @staticmethod\n    def get_arch_list():\n        return {list(archs)!r}\n"
            "    @staticmethod\n    def is_available():\n        return False\n"
            "    @staticmethod\n    def device_count():\n        return 0\n")
    return build_wheel(out, "torch", version, {"torch/__init__.py": init}, requires, pad_files)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_page(directory: Path, links: list) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    body = "".join(f'<a href="{href}">{text}</a><br>\n' for href, text in links)
    (directory / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{body}</body></html>\n")


class Index:
    """A PEP 503 tree under root: whl/<variant>/torch/ (the torch index) and simple/<name>/ (the user's index)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = root / "files"
        self.files.mkdir(parents=True)
        self.truncate: set = set()
        self.hold = threading.Event()  # cleared: requests for the files in `held` wait for it
        self.hold.set()
        self.held: set = set()
        self.requested = threading.Event()  # set when a held file was asked for
        self.auth: str = None  # "user:password" that /whl/ and /files/ ask for (HTTP basic)
        self.authorized = 0  # requests that brought the right credentials
        self.secret_in_argv: list = []  # command lines that held the password while a file was served
        self.torch: list = []
        self.simple: dict = {}

    def add_torch(self, whl: Path, variant: str = "cpu", hash_override: str = None) -> None:
        shutil.copy(whl, self.files / whl.name)
        self.torch.append((whl.name, hash_override or sha256(whl), variant))
        self._write()

    def add_simple(self, whl: Path, name: str, hashed: bool = True) -> None:
        shutil.copy(whl, self.files / whl.name)
        self.simple.setdefault(name, []).append((whl.name, sha256(whl) if hashed else None))
        self._write()

    def _write(self) -> None:
        for variant in {v for _n, _h, v in self.torch}:
            links = [(f"/files/{n.replace('+', '%2B')}#sha256={h}", n) for n, h, v in self.torch if v == variant]
            write_page(self.root / "whl" / variant / "torch", links)
        write_page(self.root / "simple", [(f"{n}/", n) for n in self.simple])
        for name, items in self.simple.items():
            write_page(self.root / "simple" / name, [(f"/files/{n}" + (f"#sha256={h}" if h else ""), n) for n, h in items])


def _command_lines_holding(secret: str) -> list:
    found = []
    for d in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes() if d.isdigit() else b""
        except OSError:
            continue
        if secret.encode() in cmd:
            found.append(cmd.replace(b"\0", b" ").decode(errors="replace"))
    return found


def serve(index: Index):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(index.root), **kw)

        def log_message(self, *a):
            pass

        def do_GET(self):
            name = self.path.rsplit("/", 1)[-1].replace("%2B", "+")
            if index.auth and self.path.startswith(("/whl/", "/files/torch")):
                want = "Basic " + base64.b64encode(index.auth.encode()).decode()
                if self.headers.get("Authorization") != want:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="torch"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                index.authorized += 1
                if self.path.startswith("/files/"):
                    index.secret_in_argv += _command_lines_holding(index.auth.split(":", 1)[1])
            if name in index.held:
                index.requested.set()
                index.hold.wait(300)
            if name in index.truncate:
                data = (index.files / name).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 3])
                self.wfile.flush()
                self.connection.shutdown(2)  # the server dies mid-transfer
                self.close_connection = True
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="session")
def wheels(tmp_path_factory):
    d = tmp_path_factory.mktemp("wheels")
    return {
        "old_torch": fake_torch(d, "2.13.0+cpu", requires=["fakedep>=1"]),
        "dep1": build_wheel(d, "fakedep", "1.0", {"fakedep/__init__.py": "V = 1\n"}),
        "dep2": build_wheel(d, "fakedep", "2.0", {"fakedep/__init__.py": "V = 2\n"}),
    }


@pytest.fixture(scope="session")
def venv_template(tmp_path_factory, wheels):
    """One venv with pip, the old fake torch 2.13.0+cpu and fakedep 1.0; each test copies it."""
    d = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links",
                    str(wheels["dep1"].parent), "torch==2.13.0+cpu", "fakedep==1.0"], check=True, env=clean_env())
    return d


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ENVDOCTOR_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(extra)
    return env


@pytest.fixture
def site(tmp_path, venv_template, wheels):
    venv = tmp_path / "venv"
    shutil.copytree(venv_template, venv, symlinks=True)
    index = Index(tmp_path / "index")
    index.add_simple(wheels["dep1"], "fakedep")
    index.add_simple(wheels["dep2"], "fakedep")
    server = serve(index)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    env = clean_env(PIP_INDEX_URL=f"{url}/simple", XDG_CACHE_HOME=str(tmp_path / "cache"), PIP_CACHE_DIR=str(tmp_path / "pipc"),
                    ENVDOCTOR_INSTALLER="pip", PYTHONDONTWRITEBYTECODE="1")
    yield type("Site", (), {"venv": venv, "python": str(venv / "bin" / "python"), "index": index, "url": url,
                            "env": env, "tmp": tmp_path, "server": server})
    server.shutdown()


def freeze(site) -> str:
    return subprocess.run([site.python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True,
                          env=site.env).stdout


def fix(site, *extra, timeout=180, popen=False, index_base=None, env=None, as_json=True):
    base = ["--index-base", index_base or f"{site.url}/whl"] if index_base != "" else []
    argv = [sys.executable, "-m", "envdoctor", "fix", "--python", site.python, "--torch", "2.14.1", *base,
            *(["--json"] if as_json else []), *extra]
    env = dict(site.env, **(env or {}))
    if popen:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def undo(site, timeout=180):
    return subprocess.run([sys.executable, "-m", "envdoctor", "undo", "--python", site.python], cwd=ROOT, env=site.env,
                          capture_output=True, text=True, timeout=timeout)


def assert_rolled_back(site, res, before):
    assert res.returncode == 3, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True, doc.get("message")
    assert_valid(doc)
    assert freeze(site) == before
    out = subprocess.run([site.python, "-c", "import torch, fakedep; print(torch.__version__, fakedep.V)"],
                         capture_output=True, text=True, env=site.env)
    assert out.stdout.split() == ["2.13.0+cpu", "1"], out.stderr


@pytest.mark.slow
def test_clean_install_then_undo(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    assert "torch==2.13.0+cpu" in before and "fakedep==1.0" in before
    res = fix(site, "--yes")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed"
    assert_valid(doc)
    download, install = doc["commands"]
    assert download[1:4] == ["-m", "pip", "download"] and f"{site.url}/whl/cpu" in download
    assert "--no-index" in install and "torch==2.14.1+cpu" in install
    assert not any("127.0.0.1" in a and "simple" in a for a in download)  # the dependency index is pip's own config
    after = freeze(site)
    assert "torch==2.14.1+cpu" in after and "fakedep==2.0" in after
    res = subprocess.run([sys.executable, "-m", "envdoctor", "undo", "--python", site.python], cwd=ROOT, env=site.env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert freeze(site) == before
    # Nothing left to undo.
    res = subprocess.run([sys.executable, "-m", "envdoctor", "undo", "--python", site.python], cwd=ROOT, env=site.env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "no fix to undo" in res.stderr


@pytest.mark.slow
def test_verification_failure_rolls_back(site):
    # The wheel says it is 2.14.1+cpu but the module reports a CUDA build.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cu130", cuda="13.0", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes")
    assert_rolled_back(site, res, before)
    assert "verification failed" in json.loads(res.stdout)["message"]


@pytest.mark.slow
def test_bad_hash_changes_nothing(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]), hash_override="0" * 64)
    before = freeze(site)
    res = fix(site, "--yes")
    assert_rolled_back(site, res, before)
    assert "download failed" in json.loads(res.stdout)["message"]
    assert "HASHES" in res.stderr.upper()


@pytest.mark.slow
def test_truncated_wheel_rolls_back(site):
    whl = fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"])
    whl.write_bytes(whl.read_bytes()[:200])  # a broken zip whose hash the index states correctly
    site.index.add_torch(whl)
    before = freeze(site)
    assert_rolled_back(site, fix(site, "--yes"), before)


@pytest.mark.slow
def test_server_dying_mid_transfer(site):
    whl = fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=200)
    site.index.add_torch(whl)
    site.index.truncate.add(whl.name)
    before = freeze(site)
    assert_rolled_back(site, fix(site, "--yes"), before)


def _pip_install_pid(python: str):
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].decode(errors="replace") == python and b"install" in cmd and b"--no-index" in cmd:
            return int(d)
    return None


def pip_writing_torch(site, proc) -> int:
    """The pid of the `pip install` that `proc` (a fix) started, once pip has removed the old torch and is writing the
    new one."""
    old_dist = next((site.venv / "lib").glob("python3.*/site-packages/torch-2.13.0+cpu.dist-info"))
    deadline = time.monotonic() + 120
    pid = None
    while time.monotonic() < deadline and proc.poll() is None:
        pid = pid or _pip_install_pid(site.python)
        if pid and not old_dist.exists():
            break
        time.sleep(0.002)
    assert pid, "pip install never started"
    return pid


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill_pip", "sigint_envdoctor"])
def test_interrupted_install_rolls_back(site, how):
    # A big wheel so that pip is still writing files when it is stopped.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=4000))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True)
    pid = pip_writing_torch(site, proc)
    if how == "kill_pip":
        os.kill(pid, signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=180)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert_rolled_back(site, res, before)
    message = json.loads(out)["message"]
    assert message.startswith("installer killed by signal 9" if how == "kill_pip" else "interrupted"), message
    assert "keeping the files of fakedep, torch" in err


@pytest.mark.slow
def test_without_yes_and_without_a_terminal_nothing_is_installed(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site)
    assert res.returncode == 0 and "not installing" in res.stderr
    assert json.loads(res.stdout)["status"] == "planned"
    assert freeze(site) == before


def test_only_http_or_file_index_urls():
    # refused before any environment is read or changed: no venv or index server is needed
    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"),
                          "--index-base", "ftp://mirror/whl"], cwd=ROOT, env=clean_env(ENVDOCTOR_INSTALLER="pip"),
                         capture_output=True, text=True)
    assert res.returncode == 2 and "only http://, https:// or file://" in res.stderr


@pytest.mark.slow
def test_kill_9_of_envdoctor_takes_pip_down_with_it(site):
    import psutil

    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=4000))
    proc = fix(site, "--yes", popen=True)
    deadline = time.monotonic() + 120
    pid = None
    while time.monotonic() < deadline and proc.poll() is None and pid is None:
        pid = _pip_install_pid(site.python)
        time.sleep(0.002)
    assert pid, "pip install never started"
    pip = psutil.Process(pid)
    proc.kill()
    proc.communicate(timeout=60)
    _gone, alive = psutil.wait_procs([pip], timeout=60)
    assert alive == []


@pytest.mark.slow
def test_a_silent_installer_step_times_out_and_is_killed(tmp_path):
    import psutil

    from envdoctor.install.installer import InstallFailed, _stream

    pidfile = tmp_path / "pid"
    code = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\nprint('working', flush=True)\ntime.sleep(300)"
    lines = []
    with pytest.raises(InstallFailed, match="timed out after 5s"):
        _stream([sys.executable, "-c", code], dict(os.environ), lines.append, 5)
    assert lines[1:] == ["  working"]
    pid = int(pidfile.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_an_installer_that_cannot_start_is_a_failure_not_a_traceback(tmp_path):
    from envdoctor.errors import InputError
    from envdoctor.install.installer import InstallFailed, _stream, describe_env, verify
    from envdoctor.wheels.planner import Plan

    with pytest.raises(InstallFailed, match="no-such-pip: not found"):
        _stream([str(tmp_path / "no-such-pip")], dict(os.environ), lambda _line: None, 60)
    missing = str(tmp_path / "no-such-python")
    assert verify(missing, Plan("planned"), {}, [], 60) == ["verification could not run: no-such-python: not found"]
    with pytest.raises(InputError, match="cannot describe the environment: no-such-python: not found"):
        describe_env(missing)

# Importing the real torchvision registers its C++ operators in torch.ops (the probe looks for torchvision::nms);
# the stand-in of the right build does so, the wrong build's do not load.
REGISTERS = ("import torch\n"
             "torch.ops = type('ops', (), {'torchvision': type('torchvision', (), {'nms': staticmethod(len)})})\n")


def _torchvision(out, version: str, says: str, loads: bool):
    init = (REGISTERS if loads else "") + f"__version__ = {says!r}\n"
    return build_wheel(out, "torchvision", version, {"torchvision/__init__.py": init,
                                                     "torchvision/version.py": f"__version__ = {says!r}\ncuda = None\n"},
                       requires=["torch==2.13.0"])


def _check_json(site) -> dict:
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", site.python, "--json"], cwd=ROOT,
                         env=site.env, capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return json.loads(res.stdout)


@pytest.mark.slow
def test_a_companion_of_the_wrong_build_is_replaced_by_the_right_one(site, wheels, tmp_path):
    """The right variant of a companion, installed for real: torchvision of torch's release but another build (its
    version.py says +cu130 beside a +cpu torch) is replaced by the +cpu build from the index torch came from, and the
    verifier's fresh check no longer finds ED502 (no CPU torchvision can be had from the registry here)."""
    wrong = _torchvision(tmp_path, "0.28.0", "0.28.0+cu130", loads=False)  # PyPI's shape: the dist says 0.28.0, the file +cu130
    subprocess.run([site.python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wrong)], check=True,
                   env=site.env, capture_output=True, timeout=300)
    site.index.add_torch(wheels["old_torch"], "cpu")  # the torch index serves the torch in place too, as PyTorch's does
    right = _torchvision(site.index.files, "0.28.0+cpu", "0.28.0+cpu", loads=True)
    write_page(site.index.root / "whl" / "cpu" / "torchvision",
               [(f"/files/{right.name.replace('+', '%2B')}#sha256={sha256(right)}", right.name)])
    [finding] = [f for f in _check_json(site)["findings"] if f["id"] == "ED502"]
    assert "0.28.0+cu130" in finding["title"] + finding["detail"]

    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--python", site.python, "--index-base",
                          f"{site.url}/whl", "--yes", "--json"], cwd=ROOT, env=site.env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    doc = json.loads(res.stdout)
    assert doc["status"] == "installed" and "torchvision==0.28.0+cpu" in doc["message"], doc["message"]
    after = _check_json(site)
    assert "ED502" not in {f["id"] for f in after["findings"]}
    assert after["snapshot"]["torch"]["companions"]["torchvision"]["build_version"] == "0.28.0+cpu"

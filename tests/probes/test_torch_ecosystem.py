"""The facts around torch: the target-side reader (torch_ecosystem.py) and what the torch probe makes of them.

The reader is a stdlib script run in the target interpreter; here it is loaded by path to test its
parts on fake files (distributions, /proc/self/maps), and run for real through the torch probe with
fake packages on PYTHONPATH, the boundary the probe reads.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from envdoctor.probes import pyenv, torch_probe
from envdoctor.probes.children_run import CHILDREN
from envdoctor.probes.runner import run_probes
from envdoctor.snapshot import ProbeFailed, Snapshot, Unavailable, snapshot_from_json
from tests.probes.test_torch_probe import ctx, fake_dist, fake_torch


def _load_reader():
    spec = importlib.util.spec_from_file_location("torch_ecosystem_under_test", CHILDREN / "torch_ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


eco = _load_reader()


def write_dist(site, name, version, requires=(), files=None, extra_meta=""):
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(meta + extra_meta)
    record = []
    for rel, text in (files or {}).items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        record.append(f"{rel},,")
    (info / "RECORD").write_text("".join(line + "\n" for line in record))
    return info


def dists_in(site):
    from importlib import metadata

    return {eco.norm(d.metadata["Name"]): d for d in metadata.distributions(path=[str(site)])}


# --- requirement checking, as pip check does it ------------------------------------------------

CASES = [
    ("sympy>=1.13.3", "1.12", False),
    ("sympy>=1.13.3", "1.14.0", True),
    ("sympy (>=1.13.3)", "1.12", False),
    ("torch==2.13.0", "2.13.0+cpu", True),
    ("torch==2.5.1", "2.13.0+cpu", False),
    ("numpy<2", "2.1.3", False),
    ("numpy<2,>=1.22", "1.26.0", True),
    ("typing-extensions>=4.10.0", "4.16.0", True),
    ("nvidia-nccl-cu12==2.21.5; platform_system == 'Linux' and platform_machine == 'x86_64'", "2.20.5",
     False if sys.platform.startswith("linux") and os.uname().machine == "x86_64" else None),
    ("triton==3.1.0; platform_system == 'Windows'", "3.0.0", None),
    ("pytest; extra == 'dev'", None, None),
    ("fsspec~=2024.6", "2024.9.0", True),
    ("fsspec~=2024.6", "2025.1.0", False),
    ("jinja2==3.*", "3.1.6", True),
    ("filelock!=3.12.0", "3.12.0", False),
    ("numpy>=1.22; python_version >= '3.8'", "1.21.0", False),
    ("numpy>=1.22; python_version < '3.8'", "1.21.0", None),
]


def without_packaging(monkeypatch):
    """A target interpreter without packaging installed."""
    for name in ("packaging", "packaging.requirements", "packaging.version"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("text, installed, satisfied", CASES)
def test_stdlib_fallback_agrees_with_packaging(monkeypatch, text, installed, satisfied):
    name, with_packaging = eco.requirement_checker()
    assert name == "packaging"
    without_packaging(monkeypatch)
    name, with_stdlib = eco.requirement_checker()
    assert name == "stdlib"
    for check in (with_packaging, with_stdlib):
        dep, applies, _ = check(text, None)
        if satisfied is None:
            if installed is None or not applies:
                assert not applies
                continue
        assert applies
        _, _, ok = check(text, installed)
        assert ok is satisfied, (check, text, installed)


def test_fallback_says_undecidable_rather_than_guess(monkeypatch):
    without_packaging(monkeypatch)
    _, check = eco.requirement_checker()
    assert check("torch>=2.0.0rc1", "2.1.0")[2] is None  # a pre-release it does not compare
    assert check("foo; (os_name == 'posix')", None)[1] is None  # parentheses: not evaluated
    assert check("foo @ https://example.invalid/foo.whl", None)[0] is None


def test_conflicts_and_nvidia_pins_from_distributions(tmp_path):
    site = tmp_path / "site"
    write_dist(site, "torch", "2.5.1", requires=[
        "sympy==1.13.1; python_version >= '3.9'", "typing-extensions>=4.8.0",
        "nvidia-nccl-cu12==2.21.5; platform_system == 'Linux'", "nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'",
        "opt-einsum>=3.3; extra == 'opt-einsum'"])
    write_dist(site, "sympy", "1.12")
    write_dist(site, "typing-extensions", "4.12.2")
    write_dist(site, "nvidia-nccl-cu12", "2.20.5")
    write_dist(site, "requests", "2.0.0", requires=["idna>=99"])  # not around torch: not checked
    dists = dists_in(site)
    _, check = eco.requirement_checker()
    found = eco.conflicts(dists, check)
    by = {(c["package"], c["requirement"].split(";")[0].strip()): c["installed"] for c in found}
    assert by[("torch", "sympy==1.13.1")] == "1.12"
    if sys.platform.startswith("linux"):
        assert by[("torch", "nvidia-nccl-cu12==2.21.5")] == "2.20.5"
        assert by[("torch", "nvidia-cudnn-cu12==9.1.0.70")] is None
        wheels = eco.nvidia_wheels(dists, eco.torch_requires(dists, check))
        assert wheels["nvidia-nccl-cu12"]["installed"] == "2.20.5" and "2.21.5" in wheels["nvidia-nccl-cu12"]["required"]
        assert wheels["nvidia-cudnn-cu12"]["installed"] is None
    assert not any(c["package"] == "requests" for c in found)
    assert not any("opt-einsum" in c["requirement"] for c in found)


# --- loaded libraries and their on-disk versions ----------------------------------------------


def test_mapped_cuda_libraries_read_the_real_files_and_their_wheels(tmp_path):
    site = tmp_path / "site"
    lib = "nvidia/nccl/lib/libnccl.so.2"
    write_dist(site, "nvidia-nccl-cu12", "2.20.5", files={lib: "elf"})
    driver_dir = tmp_path / "usr" / "lib"
    driver_dir.mkdir(parents=True)
    (driver_dir / "libcuda.so.550.54.15").write_text("elf")
    os.symlink("libcuda.so.550.54.15", driver_dir / "libcuda.so.1")
    maps = tmp_path / "maps"
    maps.write_text(
        f"7f00-7f01 r-xp 00000000 08:01 1 {site / lib}\n"
        f"7f01-7f02 r--p 00001000 08:01 1 {site / lib}\n"
        f"7f02-7f03 r-xp 00000000 08:01 2 {driver_dir / 'libcuda.so.1'}\n"
        "7f03-7f04 r-xp 00000000 08:01 3 /usr/lib/libc.so.6\n"
        "7f04-7f05 rw-p 00000000 00:00 0\n")
    libs = eco.mapped_cuda_libraries(dists_in(site), str(maps))
    assert [os.path.basename(x["path"]) for x in libs] == ["libnccl.so.2", "libcuda.so.1"]
    nccl, cuda = libs
    assert (nccl["dist"], nccl["dist_version"], nccl["file_version"]) == ("nvidia-nccl-cu12", "2.20.5", "2")
    assert (cuda["dist"], cuda["file_version"]) == (None, "550.54.15")


# --- extension build records --------------------------------------------------------------------


def test_extension_build_records(tmp_path):
    site = tmp_path / "site"
    write_dist(site, "flash-attn", "2.5.8+cu122torch2.3cxx11abiFALSE", requires=["torch", "einops"])
    write_dist(site, "xformers", "0.0.27", requires=["torch==2.3.1"], files={
        "xformers/cpp_lib.json": json.dumps({"version": {"torch": "2.3.1+cu121", "cuda": 1201, "python": "3.11"}})})
    write_dist(site, "vllm", "0.6.3", requires=["torch==2.4.0", "xformers==0.0.27.post2; platform_system == 'Linux'"])
    write_dist(site, "bitsandbytes", "0.44.1", requires=["torch"])
    dists = dists_in(site)
    fa = eco.extension_build("flash-attn", dists["flash-attn"])
    assert fa == {"torch_version": "2.3", "cuda_version": "12.2", "cxx11_abi": False, "source": "wheel version"}
    xf = eco.extension_build("xformers", dists["xformers"])
    assert xf["torch_version"] == "2.3.1+cu121" and xf["source"] == "build record"
    assert eco.extension_build("vllm", dists["vllm"]) == {"torch_version": "2.4.0", "source": "requires-dist"}
    assert eco.extension_build("bitsandbytes", dists["bitsandbytes"]) is None


def test_python_probe_fills_extension_torch_versions(tmp_path):
    site = tmp_path / "site"
    write_dist(site, "flash-attn", "2.6.3+cu123torch2.4cxx11abiTRUE", requires=["torch"])
    write_dist(site, "vllm", "0.6.3", requires=["torch==2.4.0"])
    write_dist(site, "bitsandbytes", "0.44.1", requires=["torch"])
    out = pyenv.probe(ctx(tmp_path, str(site)))
    exts = {e.name: e for e in out.sections["extensions"]}
    assert exts["flash-attn"].torch_version == "2.4" and exts["flash-attn"].cxx11_abi is True
    assert exts["flash-attn"].cuda_version == "12.3" and exts["flash-attn"].torch_version_source == "wheel version"
    assert exts["vllm"].torch_version == "2.4.0" and exts["vllm"].requires_torch == "==2.4.0"
    assert isinstance(exts["bitsandbytes"].torch_version, Unavailable)
    env = out.sections["python"]
    assert env.pointer_bits == 64 and env.free_threaded is False


# --- through the real child, with fake packages at the boundary ---------------------------------


NUMPY1_TORCH = (
    "import sys\n"
    "sys.stderr.write('A module that was compiled using NumPy 1.x cannot be run in\\n'\n"
    "                 'NumPy 2.1.3 as it may crash. To support both 1.x and 2.x\\n')\n"
    "__version__ = '2.1.2+cu121'\n"
    "class version:\n    cuda = '12.1'\n    hip = None\n"
    "class _T:\n    def numpy(self):\n        raise RuntimeError('Numpy is not available')\n"
    "def zeros(*a):\n    return _T()\n"
    "class cuda:\n"
    "    is_available = staticmethod(lambda: False)\n    device_count = staticmethod(lambda: 0)\n"
    "    get_arch_list = staticmethod(lambda: [])\n"
)


def test_numpy_bridge_failure_is_recorded_with_numpys_words(tmp_path):
    pytest.importorskip("numpy")  # a real numpy (2.x here) beside a torch that cannot use it
    site = fake_torch(tmp_path, NUMPY1_TORCH, version="2.1.2+cu121")
    t = torch_probe.probe(ctx(tmp_path, site)).sections["torch"]
    assert t.importable and t.numpy.works is False
    assert "Numpy is not available" in t.numpy.error and "compiled using NumPy 1.x" in t.numpy.error
    assert t.numpy.version == __import__("numpy").__version__
    assert t.origin.kind == "pythonpath" and t.origin.outside_site_packages is True


@pytest.mark.slow  # starts a real torch process
def test_real_torch_ecosystem_facts(tmp_path, monkeypatch):
    """The real torch here: its NumPy bridge works, it comes from site-packages, nothing conflicts."""
    pytest.importorskip("torch")
    shadow = tmp_path / "project"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text("raise ImportError('a stray torch folder')\n")
    monkeypatch.chdir(shadow)
    out = torch_probe.probe(ctx(tmp_path))
    t = out.sections["torch"]
    assert t.importable and t.numpy.works is True and t.cxx11_abi in (True, False)
    assert t.origin.kind == "site-packages" and t.origin.outside_site_packages is False
    assert t.cwd_torch == str(shadow / "torch" / "__init__.py")
    assert t.mapped_cuda_libraries == [] and t.companions == {}
    assert out.sections["requirement_conflicts"] == []


@pytest.mark.slow  # starts a real torch process
def test_extension_import_error_and_build_record_reach_the_snapshot(tmp_path):
    pytest.importorskip("torch")
    site, pkg = fake_dist(tmp_path, "flash_attn", "raise ImportError("
                          "'/x/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')\n", version="2.5.8")
    info = site / "flash_attn-2.5.8.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.5.8+cu122torch2.3cxx11abiFALSE\n")
    c = ctx(tmp_path, str(site))
    snap = run_probes(c, only=["torch", "python"])
    ext = next(e for e in snap.extensions if e.name == "flash-attn")
    assert ext.importable is False and "undefined symbol: _ZN3c10" in ext.import_error
    assert ext.torch_version == "2.3" and ext.cxx11_abi is False
    assert snap.torch.cxx11_abi in (True, False)
    ds = next((e for e in snap.extensions if e.name == "deepspeed"), None)
    if ds is not None:  # DeepSpeed's import, from its own section
        assert ds.importable == snap.deepspeed.importable
    back = snapshot_from_json(json.loads(snap.dumps()))
    ext2 = next(e for e in back.extensions if e.name == "flash-attn")
    assert ext2.import_error == ext.import_error and ext2.torch_version == "2.3"


@pytest.mark.parametrize("body, said", [
    ("raise ImportError('libcudnn.so.9: cannot open shared object file')\n", "libcudnn.so.9"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "SIGSEGV"),  # the line is out before it dies
])
def test_torch_that_does_not_import_still_reports_metadata_facts(tmp_path, body, said):
    site = fake_torch(tmp_path, body)
    info = next((tmp_path / "site").glob("torch-*.dist-info"))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1\nRequires-Dist: sympy>=99\n")
    out = torch_probe.probe(ctx(tmp_path, site))
    t = out.sections["torch"]
    assert t.importable is False and said in t.error and isinstance(t.numpy, Unavailable)
    assert t.origin.kind == "pythonpath"
    assert [(c.package, c.requirement) for c in out.sections["requirement_conflicts"]] == [("torch", "sympy>=99")]


# --- the snapshot model ---------------------------------------------------------------------------


def test_old_snapshots_load_and_round_trip_without_the_new_fields():
    from tests.conftest import fixture_path

    text = fixture_path("h100_8x_nvswitch").read_text()
    snap = snapshot_from_json(json.loads(text))
    assert isinstance(snap.requirement_conflicts, ProbeFailed)  # not recorded: unknown, not "none"
    assert isinstance(snap.torch.numpy, ProbeFailed)
    assert snap.dumps() == text


def test_new_fields_round_trip():
    from envdoctor.snapshot import (
        Companion,
        Extension,
        MappedLibrary,
        NumpyBridge,
        NvidiaWheel,
        PythonEnv,
        RequirementConflict,
        Torch,
        TorchOrigin,
    )

    snap = Snapshot(created="2026-01-01T00:00:00Z", python=PythonEnv(version="3.13.1", free_threaded=True, pointer_bits=64))
    snap.torch = Torch(importable=True, version="2.5.1+cu124", cxx11_abi=False, cwd_torch=Unavailable("none here"),
                       origin=TorchOrigin(file="/p/torch/__init__.py", kind="pythonpath", outside_site_packages=True,
                                          site_packages=["/v/lib/python3.13/site-packages"], dist_location="/v/site"),
                       numpy=NumpyBridge(version="2.1.3", works=False, error="RuntimeError: Numpy is not available"),
                       companions={"torchvision": Companion(version="0.20.1", requires_torch="==2.5.1", importable=False,
                                                            error="RuntimeError: operator torchvision::nms does not exist",
                                                            nms_op=False, warnings=[])},
                       nvidia_wheels={"nvidia-nccl-cu12": NvidiaWheel(required="nvidia-nccl-cu12==2.21.5",
                                                                       installed=Unavailable("not installed"))},
                       mapped_cuda_libraries=[MappedLibrary(path="/x/libnccl.so.2", file_version="2", dist="nvidia-nccl-cu12",
                                                            dist_version="2.20.5")],
                       missing_files=["torch/lib/libc10.so"])
    snap.extensions = [Extension(name="xformers", version="0.0.28", torch_version="2.4.1", torch_version_source="build record",
                                 importable=False, import_error="undefined symbol: _ZN3c10", cxx11_abi=Unavailable("x"))]
    snap.requirement_conflicts = [RequirementConflict(package="torch", requirement="sympy==1.13.1", installed="1.12"),
                                  RequirementConflict(package="torch", requirement="filelock",
                                                      installed=Unavailable("not installed"))]
    data = json.loads(snap.dumps())
    from envdoctor.jsonschema_lite import validate_snapshot

    assert validate_snapshot(data) == []
    back = snapshot_from_json(data)
    assert back.dumps() == snap.dumps()
    assert back.torch.companions["torchvision"].nms_op is False
    assert back.requirement_conflicts[1].installed == Unavailable("not installed")
    assert back.torch.nvidia_wheels["nvidia-nccl-cu12"].installed == Unavailable("not installed")
    assert back.python.free_threaded is True


def test_headers_read_versions_and_requirements_as_importlib_metadata_does(tmp_path, monkeypatch):
    """Headers parse METADATA's header block once: same answers for a dist-info (CRLF, a long description
    holding header-like lines), an egg-info folder with requires.txt, and a one-file .egg-info."""
    site = tmp_path / "site"
    write_dist(site, "torch", "2.5.1", requires=["sympy==1.13.1", "filelock"],
               extra_meta="\nA README\nRequires-Dist: not-a-requirement\nVersion: 9.9\n" + "x" * 50000)
    crlf = site / "crlf_pkg-1.0.dist-info"
    crlf.mkdir()
    (crlf / "METADATA").write_bytes(b"Metadata-Version: 2.1\r\nName: crlf-pkg\r\nVersion: 1.0\r\n"
                                    b"Requires-Dist: numpy>=1\r\n\r\nDescription\r\nVersion: 2.0\r\n")
    egg = site / "oldpkg-0.3.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: oldpkg\nVersion: 0.3\n")
    (egg / "requires.txt").write_text("six>=1.0\n\n[extra]\nmock\n")
    (site / "numpy-1.21.5.egg-info").write_text("Metadata-Version: 1.1\nName: numpy\nVersion: 1.21.5\n")
    from importlib import metadata

    monkeypatch.setattr(sys, "path", [str(site)])
    found = eco.installed_dists()
    assert {n: d.version for n, d in found.items()} == {"torch": "2.5.1", "crlf-pkg": "1.0", "oldpkg": "0.3",
                                                       "numpy": "1.21.5"}
    for name, dist in found.items():
        raw = metadata.distribution(dist.metadata["Name"])
        assert (dist.version, dist.requires) == (raw.version, raw.requires), name

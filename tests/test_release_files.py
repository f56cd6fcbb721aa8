"""Which flash-attn release file fits a torch (rules/tables/extension_wheels.json), and the table checked on load."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.rules.tables import load_tables
from envdoctor.wheels.release_files import TorchBuild, file_name, name_and_version, release_file
from tests.conftest import ROOT

ROWS = load_tables(ROOT / "rules" / "tables").extension_wheels
GH = "https://github.com/Dao-AILab/flash-attention/releases/download"


def _file(torch: TorchBuild, python: str = "3.12", platform="linux_x86_64", installed=None, mirror=None):
    if torch.glibc is None:
        torch = dataclasses.replace(torch, glibc="2.39")  # Ubuntu 24.04's
    return release_file(ROWS, "flash-attn", torch, python, platform, installed, mirror)


def test_a_file_built_on_a_newer_glibc_is_not_chosen():
    """2.8.3 was built on Ubuntu 22.04 (glibc 2.35): on glibc 2.31 its files may not load ('GLIBC_2.32 not found');
    2.7.4.post1, built on 20.04, is chosen where it has a file for the torch; an unknown glibc chooses none."""
    found, why = _file(TorchBuild("2.8.0+cu128", "12.8", True, glibc="2.31"))
    assert found is None and "built on glibc 2.35; this machine's glibc is 2.31" in why
    found, _ = _file(TorchBuild("2.6.0+cu124", "12.4", False, glibc="2.31"))
    assert found.release == "2.7.4.post1"
    found, why = release_file(ROWS, "flash-attn", TorchBuild("2.8.0", "12.8", True), "3.12", "linux_x86_64")
    assert found is None and "glibc is unknown" in why


def test_the_newest_release_with_a_file_for_the_torch_is_chosen():
    found, why = _file(TorchBuild("2.8.0+cu128", "12.8", True))
    assert why == "" and found.release == "2.8.3"
    assert found.url == f"{GH}/v2.8.3/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    assert file_name(found.url) == "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    assert name_and_version(found.url) == ("flash-attn", "2.8.3+cu12torch2.8cxx11abitrue")


def test_the_installed_release_is_kept_where_it_has_a_file_for_the_torch():
    found, _ = _file(TorchBuild("2.6.0+cu124", "12.4", False), installed="2.7.4.post1")
    assert found.url == f"{GH}/v2.7.4.post1/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
    found, _ = _file(TorchBuild("2.8.0", "12.8", True), installed="2.7.4.post1")  # 2.7.4.post1 has no torch 2.8 file
    assert found.release == "2.8.3"


def test_the_cuda_tag_is_the_releases_own():
    found, _ = _file(TorchBuild("2.3.1+cu118", "11.8", False), python="3.10")
    assert found.url == f"{GH}/v2.6.3/flash_attn-2.6.3+cu118torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
    found, _ = _file(TorchBuild("2.1.2+cu121", "12.1", False), python="3.10")
    assert found.url.endswith("flash_attn-2.6.3+cu123torch2.1cxx11abiFALSE-cp310-cp310-linux_x86_64.whl")


@pytest.mark.parametrize("torch,python,platform,says", [
    (TorchBuild("2.13.0+cu130", "13.0", True), "3.12", "linux_x86_64", "no flash-attn release up to 2.8.3"),
    (TorchBuild("2.8.0+cu128", "12.8", True), "3.14", "linux_x86_64", "Python 3.14"),
    (TorchBuild("2.4.1+cu124", "12.4", False), "3.13", "linux_x86_64", "torch 2.4, CUDA 12, Python 3.13"),
    (TorchBuild("2.0.1+cu117", "12.1", False), "3.12", "linux_x86_64", "torch 2.0, CUDA 12"),
    (TorchBuild("2.8.0+cu128", "12.8", True), "3.12", "linux_aarch64", "linux_aarch64"),
    (TorchBuild("2.8.0+cpu", None, True), "3.12", "linux_x86_64", "a build without CUDA"),
    (TorchBuild("2.8.0+rocm6.3", None, True), "3.12", "linux_x86_64", "a ROCm build"),
    (TorchBuild("2.8.0", None, True, "not reported"), "3.12", "linux_x86_64", "CUDA version is unknown (not reported)"),
    (TorchBuild("2.6.0a0+ecf3bae40a.nv25.01", "12.8", True), "3.12", "linux_x86_64", "is a prerelease"),
    (TorchBuild("2.8.0", "12.8", None), "3.12", "linux_x86_64", "C++ ABI of torch 2.8.0 is unknown"),
    (TorchBuild("2.8.0", "12.8", True), "3.13t", "linux_x86_64", "not 3.13t"),
    (TorchBuild("2.8.0", "12.8", True), "3.12", None, "not this platform"),
])
def test_no_file_says_why(torch, python, platform, says):
    found, why = _file(torch, python, platform)
    assert found is None and says in why


def test_a_mirror_keeps_the_path():
    found, _ = _file(TorchBuild("2.8.0", "12.8", True), mirror="https://proxy.example/github/")
    assert found.url == ("https://proxy.example/github/Dao-AILab/flash-attention/releases/download/v2.8.3/"
                         "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")


def test_an_extension_without_release_files():
    found, why = release_file(ROWS, "xformers", TorchBuild("2.8.0", "12.8", True), "3.12", "linux_x86_64")
    assert found is None and "no release files of xformers" in why


@pytest.mark.parametrize("change,says", [
    (lambda d: d["rows"][0].pop("source"), "rows[0]: bad or missing source"),
    (lambda d: d["rows"][0].update(release="two"), "rows[0]: bad or missing release"),
    (lambda d: d["rows"][0].update(torch=["2"]), "rows[0]: bad or missing torch"),
    (lambda d: d["rows"][0].update(extension="xformers"), "no files.xformers says where its files are"),
    (lambda d: d["files"]["flash-attn"].update(url="ftp://x/{release}"), "files.flash-attn: bad or missing url"),
    (lambda d: d["files"]["flash-attn"].update(url="https://h/{release}/{cuda_tag}.whl"),
     "url names {cuda_tag}; it may name {abi}, {cuda}"),
    (lambda d: d["rows"].append(dict(d["rows"][0])), "flash-attn 2.6.3 has a row already"),
    (lambda d: d["rows"][0]["exclude"].append({"gpu": "x"}), "rows[0]: bad or missing unknown key 'exclude[3].gpu'"),
])
def test_a_bad_table_is_refused_with_what_is_wrong(tmp_path, change, says):
    tables = tmp_path / "tables"
    shutil.copytree(ROOT / "rules" / "tables", tables)
    doc = json.loads((tables / "extension_wheels.json").read_text())
    change(doc)
    (tables / "extension_wheels.json").write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_tables(Path(tables))
    assert says in str(info.value)


def test_every_row_names_a_source_and_a_file_template_that_fills():
    for row in ROWS:
        assert row.source.startswith("https://github.com/Dao-AILab/flash-attention/blob/v" + row.release)
        for cuda in row.cuda:
            assert row.file_url(row.torch[-1], cuda, row.python[-1], True, "linux_x86_64").endswith(".whl")


def test_a_release_file_is_downloaded_first_and_installed_by_its_file_with_pip_or_uv():
    """Before anything changes, the file is downloaded with --no-deps (by envdoctor's own pip, for the target's
    Python, in a venv without pip); then the saved file, not the URL, is installed over the old build."""
    import sys

    from envdoctor.install.installer import build_commands
    from envdoctor.wheels.planner import Plan

    url = f"{GH}/v2.8.3/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    saved = "/wh/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    plan = Plan("planned", python="3.12", files=[url])
    download, install = build_commands(plan, "/v/bin/python", "/wh", None, [])
    assert download[:4] == ["/v/bin/python", "-m", "pip", "download"] and download[-2:] == ["--no-deps", url]
    assert install[:3] == ["/v/bin/python", "-m", "pip"] and install[-3:] == ["--force-reinstall", "--no-deps", saved]
    download, install = build_commands(plan, "/v/bin/python", "/wh", "/bin/uv", [], has_pip=False)
    assert download[0] == sys.executable and "--python-version" in download and "--only-binary=:all:" in download
    assert install[:4] == ["/bin/uv", "pip", "install", "--python"] and install[-3:] == ["--reinstall", "--no-deps", saved]


def test_the_torch_an_extension_must_fit():
    """The torch the plan installs (its ABI that of PyTorch's binaries of its release and variant), else the one in
    place: its own ABI where it was read, else PyTorch's for a build named +cpu / +cuXXX, else unknown."""
    from envdoctor.usecases.plan_fix import torch_build
    from envdoctor.wheels.planner import MachineFacts, Plan, PlannedPackage

    tables = load_tables(ROOT / "rules" / "tables")
    planned = Plan("planned", packages=[PlannedPackage("torch", "2.8.0", "cu128", "https://i/cu128", "", "torch==2.8.0")])
    assert torch_build(planned, MachineFacts(torch_version="2.5.1+cu124"), tables) == TorchBuild("2.8.0", "12.8", True)
    keep = Plan("nothing_to_do")
    assert torch_build(keep, MachineFacts(torch_version="2.6.0+cu124", torch_cuda="12.4"), tables).cxx11_abi is False
    assert torch_build(keep, MachineFacts(torch_version="2.6.0+cu126", torch_cuda="12.6"), tables).cxx11_abi is True
    assert torch_build(keep, MachineFacts(torch_version="2.6.0", torch_cuda="12.4"), tables).cxx11_abi is None
    read = MachineFacts(torch_version="2.6.0", torch_cuda="12.4", torch_cxx11_abi=True)
    assert torch_build(keep, read, tables).cxx11_abi is True
    assert torch_build(keep, MachineFacts(), tables) is None

"""pip list, pip freeze, conda list: rows on python.packages, whole only when the listing is."""

from __future__ import annotations

from tests.text.helpers import read

CUT = "pip_list_cut_pt167242.txt"
FREEZE = "pip_freeze_rocm5778.txt"


def test_pip_list_cut_short_is_partial() -> None:
    facts = read(CUT)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("pip_list", 2, 32)]
    packages = facts.doc["python"]["packages"]
    assert packages["accelerate"] == "1.12.0.dev0" and packages["aiohttp-socks"] == "0.10.2"  # keys normalised
    assert len(packages) == 29
    assert facts.doc["partial"] == {"python.packages": "the pasted package list is cut short"}
    assert facts.whole == []
    assert facts.doc["extensions"] == [{"name": "bitsandbytes", "version": "0.48.2"}]


def test_pip_list_whole() -> None:
    paste = "Package    Version\n---------- -------\nnumpy      1.26.4\ntorch      2.3.1\n\n$ python train.py"
    facts = read(paste)
    assert facts.doc["python"]["packages"] == {"numpy": "1.26.4", "torch": "2.3.1"}
    assert facts.whole == ["python.packages"] and "partial" not in facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("pip_list", 1, 4)]


def test_pip_freeze() -> None:
    facts = read(FREEZE)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("pip_freeze", 1, 21)]
    packages = facts.doc["python"]["packages"]
    assert packages["nvidia-nccl-cu12"] == "2.27.5" and packages["onnxruntime-gpu"] == "1.21.1"
    assert len(packages) == 21
    assert facts.whole == ["python.packages"]


def test_one_pinned_line_is_no_freeze() -> None:
    facts = read("some text\ntorch==2.1.0\nmore text\n")
    assert facts.sections == [] and facts.doc == {}


def test_conda_list() -> None:
    paste = "\n".join([
        "# packages in environment at /home/me/miniconda3/envs/ml:",
        "#",
        "# Name                    Version                   Build  Channel",
        "numpy                     1.26.4          py310h5f9d8c6_0",
        "pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch",
        "xformers                  0.0.23          pypi_0    pypi",
    ])
    facts = read(paste)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("conda_list", 1, 6)]
    assert facts.doc["python"]["conda_packages"] == {"numpy": "1.26.4", "pytorch": "2.1.0", "xformers": "0.0.23"}
    assert facts.doc["python"]["packages"] == {"xformers": "0.0.23"}  # what pip installed
    assert facts.whole == ["python.conda_packages"]
    assert "python.packages" in facts.doc["partial"]


def test_conda_list_real_outputs() -> None:
    linux = read("conda_list_pt32369.txt")
    assert [(s.kind, s.start, s.end) for s in linux.sections] == [("conda_list", 2, 18)]
    assert linux.doc["python"]["conda_packages"]["cudatoolkit"] == "10.1.243"
    assert linux.doc["python"]["conda_packages"]["jpeg"] == "9b" and len(linux.doc["python"]["conda_packages"]) == 14
    assert "packages" not in linux.doc["python"]  # nothing from pip: pip's list stays unknown
    assert linux.whole == ["python.conda_packages"]
    windows = read("conda_list_win_torchhull11.txt")
    assert windows.doc["python"]["packages"]["aiohttp"] == "3.11.17"  # pypi rows are pip's
    assert "absl-py" in windows.doc["python"]["packages"] and "aom" not in windows.doc["python"]["packages"]
    assert windows.doc["partial"]["python.conda_packages"] == "the pasted conda list is cut short"  # "blas" alone
    assert windows.whole == []


def test_old_conda_list_with_pip_rows_and_features() -> None:
    facts = read("conda_list_old_omnia813.txt")
    conda = facts.doc["python"]["conda_packages"]
    assert conda["freetype"] == "2.8" and conda["h5py"] == "2.7.1"  # a features column does not end the list
    assert conda["cudnn"] == "6.0" and conda["cudatoolkit"] == "8.0"
    assert facts.doc["python"]["packages"] == {"bleach": "1.5.0", "enum34": "1.1.6"}  # "<pip>" rows
    assert "python.conda_packages" in facts.doc["partial"]  # "hdf5 1.10.1" has lost its build: cut short

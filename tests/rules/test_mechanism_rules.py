"""Rules per mechanism (issue 25, point 3): each reads facts or the class of an error text, never one thread's
wording. ED317 torch.compile refuses the interpreter (rules/tables/dynamo_python.json), ED112 driver libraries
and kernel module differ, ED514/ED515 a symbol version the loader lacks, ED508 a torch C++ symbol the
extension needs (Linux and macOS spellings), ED311 a C++ compiler."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List

import pytest

from envdoctor.rules.ecosystem_predicates import UNDEFINED_TORCH_SYMBOL
from envdoctor.snapshot import snapshot_from_json
from tests.conftest import bundled_knowledge, diagnose_bundled, fixture_path


def raw(name: str) -> Dict[str, Any]:
    return json.loads(fixture_path(name).read_text(encoding="utf-8"))


def variant(name: str, change: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    data = raw(name)
    change(data)
    return data


def found(data: Dict[str, Any], rule: str) -> List[Any]:
    return [f for f in diagnose_bundled(snapshot_from_json(data)) if f.id == rule]


# --- ED317: the Python versions each torch release's Dynamo accepts ------------------------------------


def test_dynamo_table_rows_have_sources_and_cover_torch_2_0_on():
    rows = bundled_knowledge().rules.tables.dynamo_python
    assert [r.python_below for r in rows] == sorted(r.python_below for r in rows)
    assert all(r.source.strip() and r.said.strip() for r in rows)
    assert rows[0].torch.contains("2.0.1") and rows[0].python_below == (3, 11)


@pytest.mark.parametrize("torch, python, fires", [
    ("2.0.1+cu118", "3.11.4", True),  # "Python 3.11+ not yet supported for torch.compile"
    ("2.0.1+cu118", "3.10.12", False),
    ("2.1.2+cu121", "3.11.4", False),  # 2.1 added 3.11
    ("2.2.2+cu121", "3.12.3", True),  # "Dynamo is not supported on Python 3.12+"
    ("2.3.1", "3.12.1", True),
    ("2.4.0+cu121", "3.12.3", False),  # 2.4 added 3.12
    ("2.5.1+cu124", "3.13.1", True),
    ("2.6.0+cu126", "3.13.1", False),  # 2.6 added 3.13
    ("2.9.1", "3.14.0", True),
    ("2.10.0", "3.14.0", False),  # 2.10 added 3.14
    ("2.4.0.dev20240501+cu121", "3.12.3", False),  # a nightly is read as its release
    ("2.14.1+cu130", "3.15.0", False),  # past the table: not known, not said
    ("1.13.1+cu117", "3.11.4", False),  # no torch.compile before 2.0
])
def test_dynamo_refuses_python(torch, python, fires):
    def change(d):
        d["torch"]["version"] = torch
        d["python"]["version"] = python
    got = found(variant("rtx4090_pair", change), "ED317")
    assert bool(got) == fires
    if fires:
        f = got[0]
        assert f.severity == "warning" and f.category == "compile_unready"
        assert python.rsplit(".", 1)[0] in f.title and "torch.compile" in f.detail


def test_dynamo_rule_names_the_first_torch_that_accepts_the_python():
    def change(d):
        d["torch"]["version"] = "2.2.2+cu121"
    f = found(variant("rtx4090_pair", change), "ED317")[0]
    assert "upgrade torch to 2.4 or newer" in f.fix and "Python below 3.12" in f.fix


def test_dynamo_rule_is_quiet_when_torch_does_not_import():
    def change(d):
        d["torch"]["version"] = "2.2.2+cu121"
        d["torch"]["importable"] = False
    assert found(variant("rtx4090_pair", change), "ED317") == []


# --- ED112: user-space driver libraries and kernel module of different releases -----------------------


@pytest.mark.parametrize("text", [
    "NVML: nvmlInit: RM has detected an NVML/RM version mismatch.; nvidia-smi exited 18: "
    "Failed to initialize NVML: Driver/library version mismatch",
    "NVML: Failed to initialize NVML: Driver/library version mismatch; read nvidia-smi instead",
    "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch".replace(
        "driver/library", "Driver/library"),
    "NVML: nvmlInit: NVML_ERROR_LIB_RM_VERSION_MISMATCH",
])
def test_driver_library_mismatch_reads_the_class_of_nvml_texts(text):
    def change(d):
        nvml = next(p for p in d["probes"] if p["name"] == "nvml")
        nvml.update(status="failed", error=text)
        d["gpus"] = None
        d["driver"]["source"] = "procfs"
    got = found(variant("h100_8x_nvswitch", change), "ED112")
    assert len(got) == 1 and got[0].severity == "error" and got[0].category == "cuda_unavailable"
    assert "550.54.15 (/proc/driver/nvidia/version)" in got[0].detail
    assert "reboot" in got[0].fix.lower()


def test_driver_library_mismatch_is_quiet_on_other_nvml_failures():
    def change(d):
        nvml = next(p for p in d["probes"] if p["name"] == "nvml")
        nvml.update(status="failed", error="NVML: nvmlInit: Unknown Error; nvidia-smi exited 255: Unable to determine")
    assert found(variant("h100_8x_nvswitch", change), "ED112") == []


# --- ED514 / ED515: a symbol version the loader's libstdc++ / glibc lacks ------------------------------


@pytest.mark.parametrize("where, text, needed", [
    ("extension", "ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.20' not found (required by "
                  "/x/_youtokentome_cython.so)", "GLIBCXX_3.4.20"),
    ("extension", "OSError: /opt/conda/lib/libstdc++.so.6: version 'GLIBCXX_3.4.30' not found", "GLIBCXX_3.4.30"),
    ("torch", "ImportError: /usr/lib64/libstdc++.so.6: version `CXXABI_1.3.11' not found (required by "
              "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)", "CXXABI_1.3.11"),
])
def test_libstdcxx_too_old_reads_the_class_of_loader_texts(where, text, needed):
    def change(d):
        if where == "torch":
            d["torch"].update(importable=False, error=text)
        else:
            d["extensions"][0]["import_error"] = text
    got = found(variant("eco_ext_undefined_symbol", change), "ED514")
    assert len(got) == 1 and needed in got[0].title and "libstdc++.so.6" in got[0].title
    assert got[0].category == "libstdcxx_too_old" and got[0].severity == "error"


def test_glibc_too_old_is_its_own_mechanism():
    text = "ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by /x/flash_attn_2_cuda.so)"

    def change(d):
        d["extensions"][0]["import_error"] = text
    data = variant("eco_ext_undefined_symbol", change)
    assert [f.id for f in found(data, "ED515")] == ["ED515"] and found(data, "ED514") == []


# --- ED508: the class of torch C++ symbols, on Linux and macOS ----------------------------------------


@pytest.mark.parametrize("text, torch_symbol", [
    ("undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
     True),
    ("undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE", True),
    ("undefined symbol: _ZTIN3c1021AutogradMetaInterfaceE", True),
    ("undefined symbol: _Z16THPVariable_WrapN2at10TensorBaseE", True),
    ("undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs", True),
    ("dlopen(/x/_C.so, 2): Symbol not found: __ZN3c1017RegisterOperatorsD1Ev", True),
    ("dlopen(/x/_C.so, 0x0002): symbol not found in flat namespace '__ZN2at4_ops5zeros4callEN3c108ArrayRefIlEE'",
     True),
    ("undefined symbol: c10::Error::Error(c10::SourceLocation)", True),
    ("undefined symbol: _ZN12attention4impl3runEv", False),
    ("undefined symbol: _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE", False),
    ("undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12", False),
    ("undefined symbol: format::x", False),
])
def test_torch_symbol_class(text, torch_symbol):
    assert bool(UNDEFINED_TORCH_SYMBOL.search(text)) == torch_symbol


def test_macos_symbol_not_found_is_an_extension_built_for_another_torch():
    text = ("ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/xformers/_C.so, 0x0002): "
            "Symbol not found: __ZN3c1017RegisterOperatorsD1Ev")

    def change(d):
        d["extensions"][0]["import_error"] = text
    got = found(variant("eco_ext_undefined_symbol", change), "ED508")
    assert len(got) == 1 and got[0].category == "extension_torch_mismatch"


# --- ED311: Inductor's C++ compiler ------------------------------------------------------------------


def test_compile_needs_a_cxx_compiler_even_with_a_c_compiler():
    def change(d):
        d["build_tools"]["cc"] = "/usr/bin/cc"
        d["absent"].pop("build_tools.cc", None)
    got = found(variant("no_compiler", change), "ED311")
    assert len(got) == 1 and "C++ compiler: none" in got[0].detail


# --- ED318: Triton per platform -----------------------------------------------------------------------


@pytest.mark.parametrize("packages, fires", [
    ({"torch": "2.6.0"}, True),
    ({"torch": "2.6.0", "triton-windows": "3.2.0.post18"}, False),
    ({"torch": "2.6.0", "triton": "3.2.0"}, False),
])
def test_windows_cuda_torch_needs_the_windows_triton(packages, fires):
    def change(d):
        d["host"].update(os="windows", wsl=False)
        d["python"]["packages"] = packages
    got = found(variant("wsl2_rtx4090", change), "ED318")
    assert bool(got) == fires
    if fires:
        assert "triton-windows" in got[0].fix and found(variant("wsl2_rtx4090", change), "ED310") == []


def test_a_text_naming_both_a_glibcxx_and_a_glibc_version_is_both_mechanisms():
    # the loader row for libstdc++ matched first, so ED515 never fired on such a text
    text = ("ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by /x/ext.so); "
            "/lib64/libc.so.6: version `GLIBC_2.32' not found (required by /x/ext.so)")

    def change(d):
        d["extensions"][0]["import_error"] = text
    data = variant("eco_ext_undefined_symbol", change)
    (cxx,), (libc,) = found(data, "ED514"), found(data, "ED515")
    assert "GLIBCXX_3.4.29" in cxx.title and "GLIBC_2.32" in libc.title

"""The ecosystem rules (rules/ecosystem.json, ED5xx): one test per rule on what it says and when it stays quiet,
the tables they read, and that an unknown fact never makes them speak."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List

import pytest

from envdoctor.errors import InputError
from envdoctor.rules.ecosystem_predicates import companion_series
from envdoctor.rules.tables import parse_ecosystem_tables as parse_tables
from envdoctor.snapshot import MappedLibrary, Unavailable, load_snapshot, snapshot_from_json
from tests.conftest import ROOT, bundled_knowledge, diagnose_bundled, fast_subset, fixture_path
from tests.rules.test_unknowns import GENERALIZES


def raw(name: str) -> Dict[str, Any]:
    return json.loads(fixture_path(name).read_text(encoding="utf-8"))


def eco(data: Dict[str, Any]) -> List[Any]:
    """The ED5xx findings on a snapshot document."""
    return [f for f in diagnose_bundled(snapshot_from_json(data)) if f.id.startswith("ED5")]


def ids(findings: List[Any]) -> List[str]:
    return sorted(f.id for f in findings)


def variant(name: str, change: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    data = raw(name)
    change(data)
    return data


# --- tables ------------------------------------------------------------------------------------


def test_companion_table_pairs_torch_minor_with_torchvision_minor_plus_15():
    t = bundled_knowledge().rules.tables.ecosystem
    assert companion_series(t, "torchvision", "2.5.1+cu124") == "0.20"
    assert companion_series(t, "torchvision", "2.14.0") == "0.29"  # past the table: the stated rule
    assert companion_series(t, "torchaudio", "2.7.0") == "2.7"
    assert companion_series(t, "torchvision", "1.12.1") == "0.13"
    assert companion_series(t, "torchvision", "0.4.1") is None


def test_every_arch_floor_has_a_source():
    floors = bundled_knowledge().rules.tables.ecosystem.arch_floors
    assert {f.extension for f in floors} >= {"flash-attn", "xformers", "vllm", "triton", "bitsandbytes"}
    assert all(f.source.startswith("https://") for f in floors)


def test_bad_tables_are_refused_with_every_problem_named():
    comp = json.loads((ROOT / "rules" / "tables" / "companions.json").read_text())
    del comp["source"]
    req = {"rows": [{"extension": "vllm", "versions": "not a spec", "min_cc": "7", "what": "x", "source": "y"}]}
    with pytest.raises(InputError) as exc:
        parse_tables(comp, req, "tables")
    assert "companions.json" in str(exc.value) and "rows[0]" in str(exc.value)


# --- one test per rule -------------------------------------------------------------------------


def test_ed501_numpy2_under_numpy1_torch_names_the_pin():
    (f,) = eco(raw("eco_numpy2_old_torch"))
    assert f.id == "ED501" and f.severity == "error" and "2.1.3" in f.title
    assert "numpy<2" in f.fix
    ok = variant("eco_numpy2_old_torch", lambda d: d["torch"]["numpy"].update(works=True, error=None))
    assert eco(ok) == []


def test_ed502_torchvision_for_another_torch_names_the_pair():
    (f,) = eco(raw("eco_torchvision_mismatch"))
    assert f.id == "ED502" and "torchvision 0.18.1" in f.title and "0.20" in f.fix


def test_ed502_from_the_package_list_when_not_imported():
    def pip_list(version):
        return lambda d: d["python"]["packages"].update(torchvision=version)
    (f,) = eco(variant("h100_8x_nvswitch", pip_list("0.18.1")))
    assert f.id == "ED502" and "0.20" in f.fix
    assert eco(variant("h100_8x_nvswitch", pip_list("0.20.1"))) == []
    assert eco(variant("h100_8x_nvswitch", pip_list("0.20.0.dev20240721+cu124"))) == []


def test_ed502_missing_nms_operator_and_cpu_vs_cuda_builds():
    (f,) = eco(raw("eco_torchvision_nms_missing"))
    assert "torchvision::nms" in f.detail

    def cpu_companion(d):
        d["torch"]["companions"]["torchvision"]["version"] = "0.20.1+cpu"
    (g,) = eco(variant("eco_torchvision_ok", cpu_companion))
    assert g.id == "ED502" and "CPU build" in g.detail
    assert eco(raw("eco_torchvision_ok")) == []


def test_ed503_torch_own_dependency_is_an_error_other_conflicts_a_warning():
    (f,) = eco(raw("eco_sympy_old"))
    assert (f.id, f.severity) == ("ED503", "error") and "sympy==1.13.1" in f.fix
    (g,) = eco(raw("eco_conflict_other"))
    assert (g.id, g.severity) == ("ED504", "warning") and "transformers requires numpy<2.0,>=1.17" in g.detail


def test_ed503_torch_import_failing_on_a_name_its_dependency_lacks():
    def broken(d):
        d["torch"].update(importable=False, error="ImportError: cannot import name 'TypeIs' from 'typing_extensions'")
    (f,) = [x for x in eco(variant("h100_8x_nvswitch", broken)) if x.id == "ED503"]
    assert "TypeIs" in f.detail and "typing-extensions" in f.fix


def test_ed505_shadowed_torch_names_where_it_came_from():
    (f,) = eco(raw("eco_torch_pythonpath"))
    assert f.id == "ED505" and "PYTHONPATH=/home/alice/src/old-torch" in f.detail
    (g,) = eco(raw("eco_torch_cwd"))
    assert "current directory" in g.detail
    assert eco(raw("eco_torch_editable")) == []


def test_ed506_ld_preload_named_when_it_injects_a_cuda_library():
    (f,) = eco(raw("eco_ld_preload_nccl"))
    assert f.id == "ED506" and "libnccl.so.2" in f.detail

    def harmless(d):
        d["env"]["LD_PRELOAD"] = "/usr/lib/libjemalloc.so.2"
    assert eco(variant("eco_ld_preload_nccl", harmless)) == []


def test_ed507_nvidia_wheel_that_does_not_satisfy_torch_pin():
    (f,) = eco(raw("eco_nccl_wheel_mismatch"))
    assert f.id == "ED507" and "nvidia-nccl-cu12 2.26.2 installed" in f.detail and "==2.21.5" in f.detail


def test_ed507_never_blames_torch_own_library():
    assert eco(raw("eco_torch_own_lib_mapped")) == []


def test_ed507_system_copy_loaded_instead_of_the_wheel():
    s = load_snapshot(fixture_path("eco_torch_own_lib_mapped"))
    not_wheel = Unavailable("not from a wheel")
    s.torch.mapped_cuda_libraries = [MappedLibrary(path="/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3",
                                                   file_version="2.18.3", dist=not_wheel, dist_version=not_wheel)]
    (f,) = [x for x in diagnose_bundled(s) if x.id.startswith("ED5")]
    assert "libnccl.so.2.18.3 (2.18.3) is loaded instead of nvidia-nccl-cu12 2.21.5" in f.detail
    s.torch.mapped_cuda_libraries[0].dist = None  # unknown where it came from: quiet
    assert not [x for x in diagnose_bundled(s) if x.id.startswith("ED5")]
    s.torch.mapped_cuda_libraries[0] = MappedLibrary(path="/usr/lib/libnccl.so.2", file_version="2", dist=not_wheel,
                                                     dist_version=not_wheel)
    assert not [x for x in diagnose_bundled(s) if x.id.startswith("ED5")]  # only the major is known: it matches


def test_ed508_extension_built_for_another_torch():
    (f,) = eco(raw("eco_xformers_old_torch"))
    assert f.id == "ED508" and "2.4.0+cu121" in f.title
    (g,) = eco(raw("eco_ext_undefined_symbol"))
    assert "_ZN3c10" in g.detail
    assert eco(raw("eco_ext_same_torch")) == []


def test_ed508_exact_pin_and_cxx11_abi():
    def pinned(d):
        d["extensions"][0].update(torch_version=None, requires_torch="==2.5.0")
    (f,) = eco(variant("eco_ext_same_torch", pinned))
    assert "torch==2.5.0" in f.title

    def abi(d):
        d["torch"]["cxx11_abi"] = False
        d["extensions"][0]["cxx11_abi"] = True
    (g,) = eco(variant("eco_ext_same_torch", abi))
    assert "C++ ABI" in g.title


def test_ed509_flash_attn_2_needs_ampere_and_3_needs_hopper():
    (f,) = eco(raw("eco_flash_attn_v100"))
    assert f.id == "ED509" and ">= 8.0" in f.detail and "github.com/Dao-AILab" in f.detail
    assert eco(raw("eco_flash_attn_a100")) == []

    def fa3(d):
        d["extensions"][0]["version"] = "3.0.0b1"
    (g,) = eco(variant("eco_flash_attn_a100", fa3))
    assert ">= 9.0" in g.detail


def test_ed509_bitsandbytes_floor_depends_on_its_release():
    def bnb(version):
        def change(d):
            d["extensions"] = [{"name": "bitsandbytes", "version": version}]
            for g in d["gpus"]:
                g["compute_capability"] = "5.2"
        return change
    (f,) = [x for x in eco(variant("eco_flash_attn_a100", bnb("0.48.2"))) if x.id == "ED509"]
    assert ">= 6.0" in f.detail
    assert "ED509" not in ids(eco(variant("eco_flash_attn_a100", bnb("0.46.1"))))


def test_ed510_torch_compile_on_a_p100():
    (f,) = eco(raw("eco_p100_compile"))
    assert f.id == "ED510" and f.severity == "warning" and "6.0" in f.title

    def windows(d):
        d["host"]["os"] = "windows"
    assert eco(variant("eco_p100_compile", windows)) == []


def test_ed511_pypy_and_32_bit_have_no_wheels():
    assert ids(eco(raw("eco_pypy"))) == ["ED511"]
    (f,) = eco(raw("eco_python_32bit"))
    assert "32-bit" in f.title
    built_here = variant("h100_8x_nvswitch", lambda d: d["python"].update(implementation="PyPy"))
    assert eco(built_here) == []  # a torch that imports in this PyPy was built for it


def test_ed512_free_threaded_python_without_t_wheels():
    (f,) = eco(raw("eco_free_threaded_old_torch"))
    assert f.id == "ED512" and f.severity == "error" and "3.13t" in f.title  # torch 2.5: no cp313t at all

    def torch26(d):
        d["torch"]["version"] = "2.6.0+cu124"
    (g,) = eco(variant("eco_free_threaded_old_torch", torch26))
    assert g.severity == "warning" and "experimental" in g.title


# --- an unknown is not a fact ------------------------------------------------------------------

ECO_FIXTURES = sorted(p.stem for p in (ROOT / "tests" / "fixtures" / "snapshots").glob("eco_*.json"))


def _leaves(node: Any, path: tuple = ()) -> List[tuple]:
    if isinstance(node, dict):
        return [x for k, v in node.items() for x in _leaves(v, path + (k,))]
    if isinstance(node, list):
        return [x for i, v in enumerate(node) for x in _leaves(v, path + (i,))]
    return [path] if node is not None else []


def _set_unknown(data: Dict[str, Any], path: tuple) -> None:
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = None


@pytest.mark.parametrize("name", fast_subset(ECO_FIXTURES, ("eco_numpy2_old_torch", "eco_torchvision_mismatch",
                                                            "eco_ext_undefined_symbol", "eco_flash_attn_a100")))
def test_turning_one_fact_unknown_never_adds_an_ecosystem_finding(name):
    data = raw(name)
    before = {(f.id, f.severity) for f in eco(data)}
    sections = ("torch", "extensions", "python", "env", "requirement_conflicts")
    paths = [p for p in _leaves({k: data.get(k) for k in sections}) if p[-1] not in ("version",) or p[0] != "python"]
    for path in paths:
        d = json.loads(json.dumps(data))
        _set_unknown(d, path)
        try:
            after = {(f.id, f.severity) for f in eco(d)}
        except ValueError:
            continue  # a required field cannot be unknown
        gone = {i for i, _ in before - after}
        added = {x for x in after - before if x[1] in ("error", "warning") and not GENERALIZES.get(x[0], set()) & gone}
        worse = {x for x in after if x[1] == "error" and not GENERALIZES.get(x[0], set()) & gone} \
            - {x for x in before if x[1] == "error"}
        assert not added and not worse, f"{name}: unknown {'.'.join(map(str, path))} added {added | worse}"


def test_healthy_machine_gets_no_ecosystem_finding():
    assert eco(load_snapshot(fixture_path("h200_8x_healthy")).to_json()) == []

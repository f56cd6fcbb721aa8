"""The facts read from the registry's wheel METADATA (facts/registry.json) in the bundled wheel index: torch 2.15.0,
the corrected facts, the Triton pins, and planning `fix --gpu 9.0 --driver 590.48.01 --torch '>=2.15'`."""

from __future__ import annotations

import copy
import importlib.util
import json

from envdoctor.wheels.index import load_index, parse_index
from envdoctor.wheels.planner import GpuFact, MachineFacts, Wishes, plan
from tests.conftest import ROOT

INDEX = json.loads((ROOT / "wheels_index.json").read_text())


def rel(version):
    return next(r for r in INDEX["torch"] if r["version"] == version)


def test_torch_2_15_is_known_with_what_its_metadata_states():
    r = rel("2.15")
    assert (r["latest_patch"], r["patch_status"], r["requires_python"]) == ("2.15.0", "verified", ">=3.11")
    assert r["python"] == ["3.11", "3.12", "3.13", "3.14", "3.15"] and r["python_experimental"] == ["3.14t", "3.15t"]
    assert {p: d["variant"] for p, d in r["pypi_default"].items()} == \
        {"linux_x86_64": "cu132", "linux_aarch64": "cu132", "win_amd64": "cpu"}
    assert all(d["status"] == "verified" and d["read_from"].startswith("registry metadata, torch-2.15.0-")
               for d in r["pypi_default"].values())
    cu132 = r["variants"]["cu132"]
    assert (cu132["cuda_toolkit"], cu132["cudnn"], cu132["nccl"], cu132["nvshmem"]) == \
        ("13.2.2", "9.26.0.51", "2.30.7", "3.7.2")
    assert cu132["pins_read_from"] == "registry metadata, torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl, 2026-12-02"
    assert (cu132["status"], cu132["assumed_from"]) == ("assumed", "2.14 cu132")  # the arch list is not in METADATA
    assert r["companions"]["triton"] == {"series": "3.9", "requirement": "~=3.9.0", "status": "verified",
                                         "read_from": cu132["pins_read_from"]}
    others = {n: v["assumed_from"] for n, v in r["variants"].items() if n != "cu132"}
    assert others == {"cpu": "2.14 cpu", "cu126": "2.14 cu126", "cu130": "2.14 cu130", "xpu": "2.14 xpu",
                      "rocm7.2": "2.14 rocm7.2", "rocm7.14": "2.14 rocm7.14"}


def test_the_three_wrong_facts_are_corrected():
    cu130 = rel("2.11")["variants"]["cu130"]
    assert cu130["cudnn"] == "9.19.0.56" and "9.17.1.4 (RELEASE.md)" in cu130["note"]
    assert (rel("2.12")["latest_patch"], rel("2.12")["patch_status"]) == ("2.12.1", "verified")
    assert rel("2.12")["companions"]["triton"]["requirement"] == "==3.7.1"
    assert rel("2.10")["pypi_default"]["linux_aarch64"]["variant"] == "cpu"


def test_triton_pins_of_every_release():
    pins = {r["version"]: r["companions"]["triton"]["requirement"] for r in INDEX["torch"]}
    assert pins["2.0"] == "==2.0.0" and pins["2.9"] == "==3.5.1" and pins["2.10"] == "==3.6.0"
    assert pins["2.11"] == "==3.6.0" and pins["2.13"] == "==3.7.1" and pins["2.14"] == "~=3.8.0"
    assert set(pins) == {r["version"] for r in INDEX["torch"]}


def test_fix_plans_torch_2_15_and_says_what_is_assumed():
    idx = load_index()
    m = MachineFacts(python="3.12", driver="590.48.01", gpus=[GpuFact(0, "H100", "9.0")])
    from packaging.specifiers import SpecifierSet

    p = plan(m, idx, Wishes(torch=SpecifierSet(">=2.15")))
    assert p.status == "planned" and p.packages[0].pin == "torch==2.15.0+cu132"
    assert "its arch list is assumed from torch 2.14 cu132 (not read from an index)" in p.packages[0].reason
    assert p.packages[0].status == "UNVERIFIED"
    # without --torch, a build whose arch list was read wins over the newer assumed one
    p = plan(m, idx, Wishes())
    assert p.packages[0].version != "2.15.0"
    why = {(r.version, r.variant): r.why for r in p.rejected}[("2.15.0", "cu130")]
    assert why.startswith("runs here if the build is as assumed from torch 2.14 cu130 (not read from an index)")


def test_a_variant_wheels_properties_become_a_verified_arch_list():
    spec = importlib.util.spec_from_file_location("build_index", ROOT / "tools" / "build_index.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    index = copy.deepcopy(INDEX)
    read_from = "registry metadata, torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64-cu132.whl, 2026-12-02"
    props = {"nvidia": {"cuda_version_lower_bound": ["13.2"], "sm_arch": ["90_real", "100_real", "120_virtual"]}}
    index["torch"] = [r for r in index["torch"] if r["version"] != "2.15"]
    for r in index["torch"]:
        for v in r["variants"].values():
            v.pop("pins_read_from", None)
    registry = {"releases": {"2.15.0": {"uploaded": "2026-10-28", "platforms": {"linux_x86_64": {
        "variant": "cu132", "cudnn": "9.26.0.51", "read_from": read_from, "pythons": ["3.12"],
        "variant_properties": props, "sm": ["sm_90", "sm_100"], "ptx": ["compute_120"]}}}}}
    mod.overlay_registry(index, registry)
    row = next(r for r in index["torch"] if r["version"] == "2.15")["variants"]["cu132"]["platforms"]["linux_x86_64"]
    assert (row["sm"], row["ptx"], row["status"], row["read_from"]) == (["sm_90", "sm_100"], ["compute_120"],
                                                                        "verified", read_from)
    parse_index(index, "<overlaid>")


NEW_FIELDS = {"read_from", "assumed_from", "listed_on", "pins_read_from", "cuda_toolkit", "nvshmem", "cusparselt",
              "variant_properties", "requires_python", "patch_read_from", "python_assumed_from", "triton"}


def _old_style(doc):
    """The document as an index from before these fields existed."""
    if isinstance(doc, dict):
        return {k: _old_style("UNVERIFIED" if k == "status" and v == "assumed" else v)
                for k, v in doc.items() if k not in NEW_FIELDS}
    if isinstance(doc, list):
        return [_old_style(x) for x in doc]
    return doc


def test_an_index_without_the_new_fields_stays_valid():
    parse_index(_old_style(copy.deepcopy(INDEX)), "<old index>")


def test_broken_new_fields_are_refused_naming_the_entry():
    import pytest

    from envdoctor.errors import InputError

    bad = copy.deepcopy(INDEX)
    r = next(x for x in bad["torch"] if x["version"] == "2.15")
    del r["variants"]["cu126"]["assumed_from"]
    r["companions"]["triton"]["read_from"] = "from memory"
    r["variants"]["cu132"]["variant_properties"] = {"nvidia": {"sm_arch": "90_real"}}
    with pytest.raises(InputError) as exc:
        parse_index(bad, "idx.json")
    msg = str(exc.value)
    assert "idx.json: torch[2.15]: missing 'variants.cu126.assumed_from'" in msg
    assert "idx.json: torch[2.15]: companions.triton.read_from" in msg
    assert "variants.cu132.variant_properties.nvidia.sm_arch" in msg

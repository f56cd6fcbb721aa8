"""Wheel variants (PEP 817/825): labels, variant.json, the nvidia properties as arch lists, this machine's
properties as a provider reports them, and `index update` planning with a release's variants.json."""

from __future__ import annotations

import json

import pytest

from envdoctor.errors import InputError
from envdoctor.usecases.wheel_index import machine_variant_properties
from envdoctor.wheels.index import load_index
from envdoctor.wheels.variants import (
    compatible,
    machine_properties,
    nvidia_build,
    parse_variant_json,
    property_lines,
    split_label,
)
from tests.registry_server import Registry
from tests.test_index_learns import recorded_index
from tests.test_index_update import env_for, run

SCHEMA = "https://variants-schema.wheelnext.dev/v0.0.3.json"
# torch 2.8.0's cu129 variant as the WheelNext index declares it (nvidia :: ... lines of a variant-aware pip)
CU129 = {"nvidia": {"cuda_version_lower_bound": ["12.9"],
                    "sm_arch": ["100_real", "120_real", "120_virtual", "75_real", "80_real", "86_real", "90_real"]}}


def doc(variants, namespaces=("nvidia",), schema=SCHEMA):
    return {"$schema": schema, "default-priorities": {"namespace": list(namespaces)}, "variants": variants}


def index_codes():
    idx = load_index()
    return idx, {int(a[3:]) for t in idx.nvcc_sass.values() for a in t if a[3:].isdigit()}


def test_labels_follow_the_platform_tag():
    assert split_label("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl") == \
        ("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl", "cu129")
    assert split_label("torch-2.8.0-1-cp313-cp313-manylinux_2_28_x86_64-null.whl")[1] == "null"
    assert split_label("torch-2.8.0-1-cp313-cp313-manylinux_2_28_x86_64.whl")[1] is None  # a build tag
    assert split_label("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl")[1] is None


def test_variant_json_is_checked():
    meta = parse_variant_json(doc({"cu129": CU129, "null": {}}), "variant.json")
    assert meta.format_version == "0.0.3" and meta.variants["cu129"] == CU129 and meta.namespaces == ["nvidia"]
    for bad, says in ((doc({"cu129": CU129}, schema="https://x/v9.9.9.json"), "format version 9.9.9 is unknown"),
                      (doc({"CU129": CU129}), "variant label 'CU129'"),
                      (doc({"cu129": CU129}, namespaces=()), "missing from default-priorities.namespace"),
                      (doc({"cu129": {"nvidia": {"sm_arch": []}}}), "non-empty list"),
                      (doc({"null": CU129}), "reserved")):
        with pytest.raises(InputError, match=says):
            parse_variant_json(bad, "variant.json")


def test_nvidia_properties_are_an_arch_list():
    build = nvidia_build(CU129)
    assert (build.cuda_lower, build.variant) == ("12.9", "cu129")
    assert build.sm == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"] and build.ptx == ["compute_120"]
    assert nvidia_build({"x86_64": {"level": ["v3"]}}) is None


def test_machine_properties_as_a_provider_reports_them():
    idx, codes = index_codes()
    props = machine_properties("590.48.01", ["9.0"], "linux", idx.drivers, codes)
    assert props["nvidia"]["cuda_version_lower_bound"][:3] == ["13.1", "13.0", "12.9"]  # 13.1 GA is 590.44.01
    assert props["nvidia"]["sm_arch"][:3] == ["90_real", "90_virtual", "89_virtual"]
    assert "100_real" not in props["nvidia"]["sm_arch"]
    mixed = machine_properties("595.71.05", ["8.6", "12.0"], "linux", idx.drivers, codes)["nvidia"]["sm_arch"]
    assert not [v for v in mixed if v.endswith("_real")] and mixed[0] == "86_virtual"  # no SASS runs on both
    assert machine_properties(None, ["9.0"], "linux", idx.drivers, codes) == {}
    assert property_lines(props)[0] == "nvidia :: cuda_version_lower_bound :: 13.1"


def test_compatibility_follows_pep_825_and_the_driver_cuda():
    idx, codes = index_codes()
    h100_575 = machine_properties("575.57.08", ["9.0"], "linux", idx.drivers, codes)
    assert compatible(CU129, h100_575)[0]
    ok, why = compatible(CU129, machine_properties("560.35.05", ["9.0"], "linux", idx.drivers, codes))
    assert not ok and "driver supports CUDA 12.6" in why
    ok, why = compatible(CU129, machine_properties("575.57.08", ["6.1"], "linux", idx.drivers, codes))
    assert not ok and "sm_arch" in why
    # a provider's lower bound is the driver's own CUDA: a cu132 build is not chosen on a 13.1 driver, although
    # minor-version compatibility runs it (envdoctor plans it only when nothing fully supported exists)
    cu132 = {"nvidia": {"cuda_version_lower_bound": ["13.2"], "sm_arch": ["90_real"]}}
    assert not compatible(cu132, machine_properties("590.48.01", ["9.0"], "linux", idx.drivers, codes))[0]
    assert compatible({}, h100_575)[0]  # the null variant


def test_the_command_prints_this_machines_properties():
    res = run(["index", "variant-properties", "--gpu", "9.0", "--driver", "590.48.01"], env_for_plain())
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "nvidia :: cuda_version_lower_bound :: 13.1" and "nvidia :: sm_arch :: 90_real" in lines
    from tests.conftest import ROOT

    res = run(["index", "variant-properties", "--snapshot", str(ROOT / "tests/data/h100_575.json")], env_for_plain())
    assert res.returncode == 0 and res.stdout.splitlines()[0] == "nvidia :: cuda_version_lower_bound :: 12.9"
    assert "nvidia :: sm_arch :: 90_real" in res.stdout and "#" not in res.stdout
    res = run(["index", "variant-properties", "--driver", "590.48.01"], env_for_plain())
    assert res.returncode == 2 and "--driver goes with --gpu" in res.stderr


def env_for_plain():
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}


def test_machine_without_driver_says_why():
    idx, _codes = index_codes()
    got = machine_variant_properties(None, [], "linux", idx)
    assert got.properties == {} and any("driver version is unknown" in n for n in got.notes)


def test_update_plans_with_a_releases_variants_json(tmp_path):
    files = recorded_index()
    declared = {"nvidia": {"cuda_version_lower_bound": ["13.3"], "sm_arch": ["90_real", "100_real", "120_real",
                                                                              "121_real", "121_virtual"]}}
    files["/f/torch-2.16.0-variants.json"] = json.dumps(doc({"cu133": declared, "null": {}})).encode()
    files["/whl/torch/"] += b'<a href="/f/torch-2.16.0-variants.json#sha256=00">torch-2.16.0-variants.json</a>\n'
    with Registry(files) as reg:
        env = env_for(tmp_path, PIP_INDEX_URL=f"{reg.url}/simple")
        res = run(["index", "update", "--index-base", f"{reg.url}/whl"], env)
        assert res.returncode == 0, res.stderr
        assert "torch 2.16 cu133: arch list read from torch-2.16.0-variants.json" in res.stderr
    data = json.loads((tmp_path / "cache" / "envdoctor" / "wheels_index.json").read_text())
    cu133 = next(r for r in data["torch"] if r["version"] == "2.16")["variants"]["cu133"]
    assert cu133["status"] == "verified" and "assumed_from" not in cu133 and cu133["variant_properties"] == declared
    row = cu133["platforms"]["linux_x86_64"]
    assert row["sm"] == ["sm_90", "sm_100", "sm_120", "sm_121"] and row["ptx"] == ["compute_121"]
    assert row["status"] == "verified"
    assert row["read_from"].startswith("PyTorch index metadata, torch-2.16.0-variants.json, ")

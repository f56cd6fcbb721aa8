"""`envdoctor index update` learns a new minor release and new variants from a recorded PyTorch index on
127.0.0.1 (not only patches): what a listing cannot say is assumed from the previous release, marked so, and the
planner says so."""

from __future__ import annotations

import json

import pytest

from envdoctor.wheels.index import bundled_path, parse_index
from envdoctor.wheels.learn import assumed_variant, new_release
from envdoctor.wheels.remote import refresh, torch_listing
from tests.registry_server import Registry
from tests.test_index_update import env_for, run

WHEELS = {
    "cu132": ["torch-2.16.0+cu132-cp311-cp311-manylinux_2_28_x86_64.whl",
              "torch-2.16.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
              "torch-2.16.0+cu132-cp315-cp315t-manylinux_2_28_aarch64.whl",
              "torch-2.15.1+cu132-cp311-cp311-manylinux_2_28_x86_64.whl"],
    "cu133": ["torch-2.16.0+cu133-cp312-cp312-manylinux_2_28_x86_64.whl"],
    "cpu": ["torch-2.16.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"],
    "cu140": ["torch-2.16.0+cu140-cp312-cp312-manylinux_2_28_x86_64.whl"],
    "cu126": ["torch-2.15.1+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"],
}


def links(names):
    return "".join(f'<a href="/f/{n.replace("+", "%2B")}#sha256=00">{n}</a>\n' for n in names).encode()


def recorded_index():
    """A PyTorch-style index: one page per variant and the page of all torch wheels."""
    files = {f"/whl/{v}/torch/": links(names) for v, names in WHEELS.items() if v in ("cu132", "cu126", "cpu")}
    files["/whl/torch/"] = links([n for names in WHEELS.values() for n in names])
    files["/simple/deepspeed/"] = links(["deepspeed-0.19.8.tar.gz"])
    return files


@pytest.mark.slow
def test_update_learns_a_new_release_and_its_variants(tmp_path):
    with Registry(recorded_index()) as reg:
        env = env_for(tmp_path, PIP_INDEX_URL=f"{reg.url}/simple")
        res = run(["index", "update", "--index-base", f"{reg.url}/whl"], env)
        assert res.returncode == 0, res.stderr
        assert "new release torch 2.16.0: variants cpu, cu132, cu133 (arch lists assumed from torch 2.15)" in res.stderr
        assert "cu140 is listed but the index has no driver facts for CUDA 14.0: not added" in res.stderr
        data = json.loads((tmp_path / "cache" / "envdoctor" / "wheels_index.json").read_text())
        r216 = next(r for r in data["torch"] if r["version"] == "2.16")
        assert data["torch"][0]["version"] == "2.16"  # newest first
        assert (r216["latest_patch"], r216["patch_status"]) == ("2.16.0", "verified")
        assert r216["patch_read_from"].startswith(f"PyTorch index listing, {reg.url}/whl/")
        assert set(r216["variants"]) == {"cpu", "cu132", "cu133"}  # cu140: no driver facts for CUDA 14.0
        cu133 = r216["variants"]["cu133"]
        assert (cu133["status"], cu133["assumed_from"], cu133["cuda"]) == ("assumed", "2.15 cu132", "13.3")
        assert cu133["platforms"]["linux_x86_64"]["status"] == "assumed" and cu133["listed_on"]
        assert r216["python"] == ["3.11", "3.12"] and r216["python_experimental"] == ["3.15t"]
        assert r216["pypi_default"]["linux_x86_64"] == {
            "variant": "cu132", "status": "assumed", "sources": [], "assumed_from": "2.15",
            "note": "the PyPI default assumed as torch 2.15's (the index does not say)"}
        r215 = next(r for r in data["torch"] if r["version"] == "2.15")
        assert r215["latest_patch"] == "2.15.1" and r215["patch_status"] == "verified"
        res = run(["fix", "--gpu", "9.0", "--driver", "595.71.05", "--torch", ">=2.16", "--dry-run",
                   "--index-base", f"{reg.url}/whl"], env)
        assert res.returncode == 0, res.stderr
        assert "install torch==2.16.0+cu132" in res.stdout and "[not verified]" in res.stdout
        assert "torch 2.16 cu132: its arch list is assumed from torch 2.15 cu132 (not read from an index)" in res.stdout


def test_a_new_variant_of_a_known_release_is_added_assumed():
    raw = json.loads(bundled_path().read_text())
    pages = {"https://w.example/torch": links(["torch-2.14.1+cu133-cp312-cp312-manylinux_2_28_x86_64.whl"]).decode()}

    def fetch(url):
        if url not in pages:
            raise OSError("404")
        return pages[url]

    learned = []
    new, _failures, read = refresh(raw, "https://w.example", None, fetch, lambda m: None, learned, today="2026-12-02")
    assert read == 1 and learned == ["new variant torch 2.14 cu133 (arch list assumed from torch 2.14 cu132)"]
    var = next(r for r in new["torch"] if r["version"] == "2.14")["variants"]["cu133"]
    assert var["listed_on"] == "PyTorch index listing, https://w.example/torch/, 2026-12-02"
    idx = parse_index(new, "<refreshed>")
    v = idx.release("2.14").variants["cu133"]
    assert v.assumed("linux_x86_64") and v.listed and v.cuda == "13.3"


def test_listing_reads_variants_patches_and_python_tags():
    got = torch_listing([*WHEELS["cu132"], "torch-2.16.0.dev20260101+cu132-cp312-cp312-linux_x86_64.whl",
                         "torchvision-0.31.0+cu132-cp312-cp312-linux_x86_64.whl", "torch-2.16.0-cp312-none-any.whl"])
    assert got == {"cu132": {"2.16": {"patches": {"2.16.0"}, "pythons": {"3.11", "3.12", "3.15t"}},
                             "2.15": {"patches": {"2.15.1"}, "pythons": {"3.11"}}}}


def test_nothing_is_invented_for_an_unknown_kind():
    raw = json.loads(bundled_path().read_text())
    prev = next(r for r in raw["torch"] if r["version"] == "2.14")
    assert assumed_variant(prev, "cu140") is None  # no CUDA 14 variant to copy
    assert assumed_variant(prev, "npu") is None
    entry = new_release(prev, "2.99.0", ["cu130", "npu"], ["3.13"])
    assert list(entry["variants"]) == ["cu130"] and entry["variants"]["cu130"]["assumed_from"] == "2.14 cu130"
    assert "listed_on" not in new_release(prev, "2.99.0", ["cu130"], listed=False)["variants"]["cu130"]

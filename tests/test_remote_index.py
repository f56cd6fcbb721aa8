"""wheels/remote.py: reading PEP 503 pages with packaging's file-name parsers, and the refreshed index document."""

from __future__ import annotations

import json

from envdoctor.wheels.index import bundled_path, parse_index
from envdoctor.wheels.remote import file_version, page_files, refresh, released_versions, torch_patches


def test_page_files_takes_names_from_hrefs():
    page = ('<a href="/f/torch-2.14.2%2Bcu126-cp313-cp313t-manylinux_2_28_x86_64.whl#sha256=00">x</a>\n'
            "<a href='../deepspeed-0.20.1.tar.gz'>deepspeed-0.20.1.tar.gz</a><a name=top>no href</a>")
    assert [n for n, _ in page_files(page)] == ["torch-2.14.2+cu126-cp313-cp313t-manylinux_2_28_x86_64.whl",
                                                 "deepspeed-0.20.1.tar.gz"]


def test_file_names_are_parsed_not_matched():
    assert file_version("Deep_Speed-0.19.8.tar.gz") == ("deep-speed", file_version("deep-speed-0.19.8.zip")[1])
    assert file_version("torch-2.14.2+cu126-cp313-cp313t-manylinux_2_28_x86_64.whl")[1].local == "cu126"
    assert file_version("torch-2.14.2-bad.whl") is None and file_version("README.md") is None


def test_torch_patches_keep_final_releases_of_the_variant_including_free_threaded_wheels():
    files = ["torch-2.14.2+cu126-cp313-cp313t-manylinux_2_28_x86_64.whl",
             "torch-2.14.1+cu126-cp312-cp312-win_amd64.whl",
             "torch-2.14.3+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
             "torch-2.15.0.dev20260101+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
             "torch-2.13.0.post1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
             "torchvision-0.29.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"]
    assert torch_patches(files, "cu126") == {"2.14": ["2.14.2", "2.14.1"]}


def test_released_versions_of_a_package_oldest_first():
    files = ["deepspeed-0.20.1.tar.gz", "deepspeed-0.19.8-py3-none-any.whl", "deepspeed-0.19.8.tar.gz", "deepspeedx-9.0.tar.gz"]
    assert released_versions(files, "DeepSpeed") == ["0.19.8", "0.20.1"]


def test_refresh_adds_what_the_pages_list_and_stays_valid():
    raw = json.loads(bundled_path().read_text())
    rel = raw["torch"][0]
    variant = next(v for v, var in rel["variants"].items() if var["kind"] == "cuda")
    major, minor = rel["version"].split(".")
    newer = f"{major}.{minor}.{int(rel['latest_patch'].split('.')[2]) + 1}"
    newest_ds = max(r["version"] for r in raw["deepspeed"]["releases"])
    pages = {
        f"https://w.example/{variant}/torch": f'<a href="torch-{newer}+{variant}-cp313-cp313t-linux_x86_64.whl">t</a>',
        "https://p.example/simple/deepspeed": '<a href="deepspeed-9.0.0.tar.gz">d</a><a href="deepspeed-9.1.0rc1.tar.gz">d</a>',
    }

    def fetch(url):
        if url not in pages:
            raise OSError("404")
        return pages[url]

    said = []
    new, failures, read = refresh(raw, "https://w.example", "https://p.example/simple/", fetch, said.append)
    assert read == 1 and failures and not any(f"/{variant}/" in f for f in failures)
    got = next(r for r in new["torch"] if r["version"] == rel["version"])
    assert got["latest_patch"] == newer and got["patch_status"] == "verified"
    assert [r["version"] for r in new["deepspeed"]["releases"][:2]] == ["9.0.0", newest_ds]
    assert new["deepspeed"]["releases"][0]["status"] == "UNVERIFIED" and new["based_on"] == raw["generated"]
    assert raw["torch"][0]["latest_patch"] == rel["latest_patch"]  # the bundled document is not changed
    parse_index(new, "<refreshed>")
    assert f"read https://w.example/{variant}/torch/" in said


def test_refresh_without_a_pip_index_says_so():
    raw = json.loads(bundled_path().read_text())
    _new, failures, read = refresh(raw, "https://w.example", None, lambda url: "", lambda m: None)
    assert read > 0 and any("no package index configured" in f for f in failures)

"""Wheel file names and tags, read by packaging (install/resolve.py and the installer's wheelhouse)."""

from __future__ import annotations

import pytest
from packaging.tags import Tag

from envdoctor.install.installer import wheelhouse_names
from envdoctor.install.resolve import newest_version, supported_tags, wheel_files, wheel_fits

PAGE = "\n".join(f'<a href="/whl/cu128/{name.replace("+", "%2B")}#sha256=00">{name}</a><br>' for name in [
    "torch-2.9.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl",  # free-threaded only
    "torch-2.9.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl",
    "torch-2.9.2+cu128-cp313-cp313-win_amd64.whl",
    "torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_aarch64.whl",
    "torch-2.9.1+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",  # another variant
    "torch-2.10.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl",  # another series
    "Torch-2.9.3+cu128-cp312-abi3-manylinux2014_x86_64.whl",  # name case, stable ABI, legacy manylinux
    "torchvision-0.24.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl",
    "torch-not-a-wheel.whl",
])


@pytest.mark.parametrize("python, platform, expected", [
    ("3.13t", "linux_x86_64", "2.9.1+cu128"),  # the cp313t wheel, and not the abi3 one
    ("3.13", "linux_x86_64", "2.9.3+cu128"),   # abi3 loads on 3.13; the cp313t wheel does not
    ("3.12", "linux_x86_64", "2.9.3+cu128"),
    ("3.13", "win_amd64", "2.9.2+cu128"),
    ("3.12", "linux_aarch64", "2.9.0+cu128"),
    ("3.13t", "win_amd64", None),
    ("3.11", "linux_aarch64", None),
])
def test_newest_version_matches_python_abi_and_platform(python, platform, expected):
    assert newest_version(PAGE, "torch", "2.9", "cu128", python, platform) == expected


def test_newest_version_for_a_free_threaded_torchvision():
    assert newest_version(PAGE, "torchvision", "0.24", "cu128", "3.13t", "linux_x86_64") == "0.24.1+cu128"
    assert newest_version(PAGE, "torchvision", "0.24", "cu128", "3.13", "linux_x86_64") is None


def test_free_threaded_python_never_takes_the_stable_abi():
    ft = supported_tags("3.13t", ("linux_x86_64",))
    assert Tag("cp313", "cp313t", "linux_x86_64") in ft and Tag("py3", "none", "any") in ft
    assert not any(t.abi in ("abi3", "cp313") for t in ft)
    assert Tag("cp313", "abi3", "linux_x86_64") in supported_tags("3.13", ("linux_x86_64",))


def test_unknown_platform_checks_the_python_tags_only():
    assert wheel_fits({Tag("cp313", "cp313t", "macosx_14_0_arm64")}, "3.13t", None)
    assert not wheel_fits({Tag("cp313", "cp313t", "macosx_14_0_arm64")}, "3.13", None)


def test_wheel_links_are_unescaped_and_unquoted():
    page = ("<a href='/f/torch-2.9.1%2Bcu128-cp313-cp313t-manylinux_2_28_x86_64.whl#sha256=ab&amp;x=1'>t</a>"
            '<A HREF="/f/sdist-1.0.tar.gz">s</A><a name="no-href">n</a>')
    assert wheel_files(page) == [("torch-2.9.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl",
                                  "/f/torch-2.9.1%2Bcu128-cp313-cp313t-manylinux_2_28_x86_64.whl#sha256=ab&x=1")]


def test_wheelhouse_names_are_canonical(tmp_path):
    for name in ("Torch-2.9.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl", "typing_extensions-4.12.2-py3-none-any.whl",
                 "Jinja2-3.1.4.tar.gz", "zope.interface-7.0.zip", "notes.txt", "broken.whl"):
        (tmp_path / name).write_text("")
    assert wheelhouse_names(tmp_path) == ["jinja2", "torch", "typing-extensions", "zope-interface"]

"""Settings: every ENVDOCTOR_* variable and the cache folder resolved once, bad values named (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.settings import DEFAULT_TORCH_TIMEOUT, Settings
from tests.conftest import fixture_path, run_cli


def test_defaults_come_from_an_empty_environment():
    s = Settings.from_env({"HOME": "/home/u"}, platform="linux")
    assert s.cache_dir == Path("/home/u/.cache/envdoctor") and s.state_root == Path("/home/u/.cache/envdoctor/state")
    assert s.user_index_path == Path("/home/u/.cache/envdoctor/wheels_index.json")
    assert (s.wheels_index, s.rules_dir, s.torch_index, s.selftest_dir, s.pip_index_url) == (None,) * 5
    assert s.torch_timeout == DEFAULT_TORCH_TIMEOUT and s.use_uv


def test_each_variable_lands_in_its_field():
    s = Settings.from_env({
        "HOME": "/h", "XDG_CACHE_HOME": "/xdg", "ENVDOCTOR_WHEELS_INDEX": "/i.json", "ENVDOCTOR_RULES_DIR": "/r",
        "ENVDOCTOR_TORCH_TIMEOUT": "12.5", "ENVDOCTOR_TORCH_INDEX": "https://m.example/whl", "ENVDOCTOR_INSTALLER": "PIP",
        "ENVDOCTOR_SELFTEST_DIR": "/runs", "PIP_INDEX_URL": "https://pypi.example/simple",
        "ENVDOCTOR_RELEASE_MIRROR": "https://proxy.example/github",
    }, platform="linux")
    assert s.cache_dir == Path("/xdg/envdoctor") and s.wheels_index == Path("/i.json") and s.rules_dir == Path("/r")
    assert s.torch_timeout == 12.5 and s.torch_index == "https://m.example/whl" and not s.use_uv
    assert s.selftest_dir == Path("/runs") and s.pip_index_url == "https://pypi.example/simple"
    assert s.release_mirror == "https://proxy.example/github" and s.fix_setup().release_mirror == s.release_mirror


@pytest.mark.parametrize("platform,env,expect", [
    ("darwin", {"HOME": "/Users/u", "XDG_CACHE_HOME": "/ignored"}, "/Users/u/Library/Caches/envdoctor"),
    ("win32", {"HOME": "/h", "LOCALAPPDATA": "/lad"}, "/lad/envdoctor/Cache"),
    ("win32", {"HOME": "/h"}, "/h/AppData/Local/envdoctor/Cache"),
])
def test_cache_folder_per_platform(platform, env, expect):
    assert Settings.from_env(env, platform=platform).cache_dir == Path(expect)


@pytest.mark.parametrize("name,value", [("ENVDOCTOR_TORCH_TIMEOUT", "abc"), ("ENVDOCTOR_TORCH_TIMEOUT", "-3"),
                                        ("ENVDOCTOR_TORCH_TIMEOUT", "nan"), ("ENVDOCTOR_INSTALLER", "conda"),
                                        ("ENVDOCTOR_RELEASE_MIRROR", "ftp://proxy.example/"),
                                        ("ENVDOCTOR_RELEASE_MIRROR", "http://[::1"),
                                        ("ENVDOCTOR_RELEASE_MIRROR", "https://u:tok@proxy.example/gh"),
                                        ("ENVDOCTOR_RELEASE_MIRROR", "https://proxy.example/gh?token=1")])
def test_a_bad_value_names_the_variable(name, value):
    with pytest.raises(InputError, match=name):
        Settings.from_env({"HOME": "/h", name: value})


def test_bad_value_is_exit_2_on_the_command_line():
    res = run_cli(["check", "--snapshot", str(fixture_path("h100_8x_nvswitch"))], env={"ENVDOCTOR_TORCH_TIMEOUT": "abc"})
    assert res.returncode == 2 and "ENVDOCTOR_TORCH_TIMEOUT='abc'" in res.stderr and "Traceback" not in res.stderr


def test_torch_index_base_option_then_variable_then_default():
    s = Settings.from_env({"HOME": "/h", "ENVDOCTOR_TORCH_INDEX": "https://env.example/whl/"})
    assert s.torch_index_base("https://opt.example/whl", "https://d.example/whl") == "https://opt.example/whl"
    assert s.torch_index_base(None, "https://d.example/whl") == "https://env.example/whl"
    assert Settings.from_env({"HOME": "/h"}).torch_index_base(None, "https://d.example/whl/") == "https://d.example/whl"
    with pytest.raises(InputError, match="ENVDOCTOR_TORCH_INDEX"):
        Settings.from_env({"HOME": "/h", "ENVDOCTOR_TORCH_INDEX": "ftp://x/whl"}).torch_index_base(None, "https://d/w")


def test_an_explicit_wheel_index_wins_and_a_bad_one_is_input_error(tmp_path):
    from envdoctor.wheels.index import bundled_path

    s = Settings.from_env({"HOME": str(tmp_path), "ENVDOCTOR_WHEELS_INDEX": str(bundled_path())})
    assert s.wheel_index().path == str(bundled_path())
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InputError, match="invalid JSON"):
        Settings.from_env({"HOME": str(tmp_path), "ENVDOCTOR_WHEELS_INDEX": str(bad)}).wheel_index()

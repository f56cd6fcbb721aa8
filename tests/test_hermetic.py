"""The suite is hermetic: a user's envdoctor cache and ENVDOCTOR_* settings never change a test's answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from envdoctor.settings import Settings
from envdoctor.wheels.index import bundled_path
from tests.conftest import ROOT, USER_DIRS

PROBE = "import os; from envdoctor.settings import Settings; print(Settings.from_env(os.environ).wheel_index().generated)"


def plant_index(path: Path, generated: str) -> None:
    """A valid wheel index that envdoctor would use in place of the bundled one (built from it, says the file)."""
    data = json.loads(bundled_path().read_text(encoding="utf-8"))
    data.update(generated=generated, based_on=data["generated"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_test_sees_the_bundled_wheel_index():
    assert not [name for name in os.environ if name.startswith("ENVDOCTOR_")]
    settings = Settings.from_env(os.environ)
    assert not settings.user_index_path.exists()
    assert settings.wheel_index().generated == json.loads(bundled_path().read_text(encoding="utf-8"))["generated"]


@pytest.mark.slow
def test_a_users_cache_and_settings_do_not_reach_the_tests(tmp_path):
    home = tmp_path / "home"
    plant_index(home / ".cache" / "envdoctor" / "wheels_index.json", "bogus-user-copy")
    plant_index(tmp_path / "explicit.json", "bogus-explicit")
    user: Dict[str, str] = {k: v for k, v in os.environ.items() if k not in USER_DIRS}
    user.update(HOME=str(home), PYTHONPATH=str(ROOT))

    def run(args, env):
        return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    # Outside the suite, that user's envdoctor reads the planted indexes...
    assert run(["-c", PROBE], user).stdout.strip() == "bogus-user-copy"
    with_setting = dict(user, ENVDOCTOR_WHEELS_INDEX=str(tmp_path / "explicit.json"))
    assert run(["-c", PROBE], with_setting).stdout.strip() == "bogus-explicit"
    # ...and a test run started by that user still sees the bundled one.
    test = f"{Path(__file__).relative_to(ROOT)}::test_a_test_sees_the_bundled_wheel_index"
    for env in (user, with_setting):
        res = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", test], env)
        assert res.returncode == 0 and "1 passed" in res.stdout, res.stdout[-3000:]

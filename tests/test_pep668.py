"""`fix --yes` refuses a PEP 668 (externally managed) environment unless --break-system-packages."""

from __future__ import annotations

import glob
import os
import subprocess
import sysconfig

import pytest

from tests.conftest import USER_HOME, run_cli


def _spare_system_python() -> str:
    """A real interpreter outside any venv (pyenv's), whose stdlib we may mark for the test's duration."""
    for path in sorted(glob.glob(str(USER_HOME / ".pyenv" / "versions" / "3.1[0-4].*" / "bin" / "python"))):
        if subprocess.run([path, "-c", ""], capture_output=True).returncode == 0:
            return path
    pytest.skip("no spare system interpreter here")


@pytest.mark.slow
def test_fix_refuses_an_externally_managed_environment():
    python = _spare_system_python()
    stdlib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                            capture_output=True, text=True).stdout.strip()
    marker = os.path.join(stdlib, "EXTERNALLY-MANAGED")
    if os.path.exists(marker):
        pytest.skip("that interpreter is already externally managed")
    assert stdlib != sysconfig.get_path("stdlib")  # never the interpreter running the tests
    with open(marker, "w") as fh:
        fh.write("[externally-managed]\nError=managed by the test\n")
    try:
        freeze_before = subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True).stdout
        res = run_cli(["fix", "--yes", "--python", python, "--index-base", "http://127.0.0.1:9/whl"])
        assert res.returncode == 2, res.stderr
        assert "PEP 668" in res.stderr and "--break-system-packages" in res.stderr
        assert "Traceback" not in res.stderr
        freeze_after = subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True).stdout
        assert freeze_after == freeze_before
    finally:
        os.unlink(marker)

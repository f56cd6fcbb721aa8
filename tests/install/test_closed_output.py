"""`fix --yes ... 2>&1 | tee fix.log`, then the reader goes away (Ctrl-C ends tee too): the rollback still runs to
the end and the exit code is still 3 (issue 30.1)."""

from __future__ import annotations

import pytest

from tests.test_install import fake_torch, fix, freeze


@pytest.mark.slow
@pytest.mark.hostile("rolled back")
def test_a_closed_output_does_not_skip_the_rollback_or_hide_exit_3(site):
    # Verification fails (the module reports a CUDA build): envdoctor rolls back after the reader is gone.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cu130", cuda="13.0", requires=["fakedep>=2"]))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True, as_json=False)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "keeping the files of" in line:
            break
    assert seen and "keeping the files of" in seen[-1], "".join(seen)[-3000:]
    proc.stderr.close()  # the reader is gone: every later progress line meets a broken pipe
    proc.stdout.close()
    assert proc.wait(timeout=300) == 3
    assert freeze(site) == before
    out = site.venv.glob("lib/python3.*/site-packages/~*")
    assert not list(out), "pip left a half-installed distribution"

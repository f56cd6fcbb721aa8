"""`fix --yes ... 2>&1 | tee fix.log`, then the reader goes away (Ctrl-C ends tee too): the rollback still runs to
the end and the exit code is still 3 (issue 30.1)."""

from __future__ import annotations

import signal
import subprocess

import pytest

from tests.test_install import fake_torch, fix, freeze, pip_writing_torch


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


@pytest.mark.slow
@pytest.mark.hostile("rolled back")
def test_ctrl_c_with_the_pipe_gone_rolls_back_and_exits_3(site):
    # `envdoctor fix --yes | tee fix.log`, then Ctrl-C: the terminal's SIGINT ends tee too, so envdoctor is
    # interrupted while pip writes the new torch, and every line it prints after meets a closed pipe.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=4000))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True, as_json=False)
    pip_writing_torch(site, proc)
    proc.stdout.close()
    proc.stderr.close()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=300) == 3
    assert freeze(site) == before
    assert not list(site.venv.glob("lib/python3.*/site-packages/~*")), "pip left a half-installed distribution"
    out = subprocess.run([site.python, "-c", "import torch, fakedep; print(torch.__version__, fakedep.V)"],
                         capture_output=True, text=True, env=site.env)
    assert out.stdout.split() == ["2.13.0+cpu", "1"], out.stderr

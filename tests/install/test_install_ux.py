"""What a person sees in a long `fix --yes`: a line per wheel at its start and end (not pip's flood), one line
for an unreachable index, a named constraint conflict, and `nothing_to_do` when the environment already matches.
Against the 127.0.0.1 index of tests/test_install.py."""

from __future__ import annotations

import json
import socket

import pytest

from envdoctor.install.constraints import excluded, read_constraints
from envdoctor.install.download_progress import DownloadMeter, progress_bar_option
from tests.test_install import fake_torch, fix, freeze


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is: nothing listens there


@pytest.mark.slow
def test_an_unreachable_torch_index_is_one_line_with_the_way_out(site):
    before = freeze(site)
    url = f"http://mirror-user:s3cr3tpw@127.0.0.1:{_closed_port()}/whl"
    res = fix(site, "--yes", index_base=url)
    assert res.returncode == 3, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert doc["status"] == "rolled_back" and doc["rollback_ok"] is True
    message = doc["message"]
    assert message.startswith("cannot reach the PyTorch index http://") and "/whl/cpu/torch/" in message
    assert "Connection refused" in message and "ENVDOCTOR_TORCH_INDEX" in message and "--index-base" in message
    assert "nothing was changed" in message
    assert "s3cr3tpw" not in res.stdout + res.stderr
    assert "ResolutionImpossible" not in res.stderr and "$ " not in res.stderr  # pip never ran
    assert freeze(site) == before


@pytest.mark.slow
def test_a_pip_constraint_that_excludes_the_plan_is_named(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    constraints = site.tmp / "constraints.txt"
    constraints.write_text("# the team's pins\ntorch<2\n")
    before = freeze(site)
    res = fix(site, "--yes", env={"PIP_CONSTRAINT": str(constraints)})
    assert res.returncode == 3, res.stderr[-3000:]
    message = json.loads(res.stdout)["message"]
    assert message.startswith(f"the constraint torch<2 from PIP_CONSTRAINT ({constraints}) excludes the planned "
                              "torch==2.14.1+cpu"), message
    assert message.endswith("nothing was changed")
    assert freeze(site) == before


@pytest.mark.slow
def test_pip_constraint_given_as_a_requirement_not_a_file_is_named(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes", env={"PIP_CONSTRAINT": "torch<2"})
    assert res.returncode == 3
    message = json.loads(res.stdout)["message"]
    assert "PIP_CONSTRAINT names 'torch<2', which pip cannot read" in message and "write 'torch<2' into a file" in message
    assert freeze(site) == before


def test_constraints_are_read_like_pip_reads_them(tmp_path):
    (tmp_path / "more.txt").write_text("fakedep==1.0 ; python_version >= '3'\n")
    main = tmp_path / "c.txt"
    main.write_text("-c more.txt\ntorch<=2.14.1  # cap\n--index-url https://example/simple\nnot a requirement !!\n")
    constraints, problems = read_constraints([("PIP_CONSTRAINT", str(main))])
    assert problems == []
    assert sorted(str(c) for c in constraints) == ['fakedep==1.0; python_version >= "3"', "torch<=2.14.1"]
    pins = ["torch==2.14.1+cu130", "fakedep==2.0", "torchvision==0.29.*"]
    assert [(pin, str(c)) for pin, c in excluded(pins, constraints)] == [("fakedep==2.0", 'fakedep==1.0; python_version >= "3"')]


@pytest.mark.slow
def test_an_allowing_constraint_a_line_per_wheel_and_then_nothing_to_do(site):
    # The venv's pip (the one Python 3.11 bundles) predates --progress-bar raw; tests/install/test_uv.py has raw.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    constraints = site.tmp / "constraints.txt"
    constraints.write_text("torch>=2.14,<3\nfakedep<3\n")
    res = fix(site, "--yes", env={"PIP_CONSTRAINT": str(constraints)})
    assert res.returncode == 0, res.stderr[-3000:]
    assert "torch==2.14.1+cpu" in freeze(site)
    download = json.loads(res.stdout)["commands"][0]
    assert download[download.index("--progress-bar") + 1] == "off"
    starts = [ln for ln in res.stderr.splitlines() if "downloading torch-2.14.1+cpu-py3-none-any.whl" in ln]
    assert len(starts) == 1, res.stderr[-3000:]
    again = fix(site, "--yes", env={"PIP_CONSTRAINT": str(constraints)})
    assert again.returncode == 0, again.stderr[-3000:]
    doc = json.loads(again.stdout)
    assert doc["status"] == "nothing_to_do" and doc["commands"] == []
    assert "$ " not in again.stderr  # no pip resolve, no download


def test_the_meter_shows_bytes_rate_and_eta_on_a_terminal_only():
    said, live = [], []
    now = [0.0]
    meter = DownloadMeter(said.append, live.append, clock=lambda: now[0], interval=1.0)
    meter.line("Collecting torch==2.14.1")
    meter.line("  Downloading https://h/whl/torch-2.14.1-cp312-none-linux_x86_64.whl (900.0 MB)")
    for t, done in ((0.5, 100_000_000), (1.0, 200_000_000), (1.2, 250_000_000), (2.0, 400_000_000)):
        now[0] = t
        meter.line(f"Progress {done} of 900000000")
    now[0] = 4.5
    meter.line("Progress 900000000 of 900000000")
    meter.line("Saved ./torch-2.14.1-cp312-none-linux_x86_64.whl")
    assert said == ["Collecting torch==2.14.1", "downloading torch-2.14.1-cp312-none-linux_x86_64.whl (900.0 MB)",
                    "downloaded torch-2.14.1-cp312-none-linux_x86_64.whl: 900.0 MB in 4s, 200.0 MB/s",
                    "Saved ./torch-2.14.1-cp312-none-linux_x86_64.whl"]
    assert live == ["torch-2.14.1-cp312-none-linux_x86_64.whl: 100.0 MB of 900.0 MB (11%), 200.0 MB/s, ETA 4s",
                    "torch-2.14.1-cp312-none-linux_x86_64.whl: 400.0 MB of 900.0 MB (44%), 200.0 MB/s, ETA 2s"]
    quiet = []
    meter = DownloadMeter(quiet.append, None, clock=lambda: 0.0)
    meter.line("Downloading x-1-py3-none-any.whl (1 kB)")
    meter.line("Progress 10 of 1000")
    assert quiet == ["downloading x-1-py3-none-any.whl (1 kB)"]


def test_raw_progress_only_with_a_pip_that_has_it():
    assert progress_bar_option("24.1") == "raw" and progress_bar_option("26.3") == "raw"
    assert progress_bar_option("23.2.1") == "off" and progress_bar_option(None) == "off"
    assert progress_bar_option("not-a-version") == "off"


def test_the_live_line_is_rewritten_in_place_and_cleared_without_escape_sequences():
    import io

    from envdoctor.present.output import LiveLine

    out = io.StringIO()
    line = LiveLine(out)
    line.show("torch: 1.0 MB of 9.0 MB")
    line.show("torch: 2.0 MB\x1b[31m")
    line.clear()
    text = out.getvalue()
    assert "\x1b" not in text
    assert text.startswith("\rtorch: 1.0 MB of 9.0 MB\rtorch: 2.0 MB") and text.endswith("\r")
    assert line.shown == 0

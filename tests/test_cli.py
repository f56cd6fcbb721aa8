"""The command line as users and scripts see it: exit codes, JSON contracts, stderr, import hygiene."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from envdoctor.cli import EXIT_INTERNAL_ERROR, main
from envdoctor.jsonschema_lite import validate_snapshot
from tests.conftest import ROOT, fixture_path, run_cli, run_cli_in_process


@pytest.fixture(scope="module")
def this_machine():
    res = run_cli(["snapshot"])
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.slow
def test_snapshot_of_this_gpu_less_machine(this_machine):
    data = this_machine
    assert validate_snapshot(data) == []
    assert data["driver"] is None and data["gpus"] == []
    assert data["torch"]["importable"] is True and data["torch"]["version"].startswith("2.13.0")
    assert data["torch"]["cuda"] is None and data["absent"]["torch.cuda"] == "unavailable: CPU build"
    records = {p["name"]: p for p in data["probes"]}
    assert set(records) >= {"torch", "python", "nvml", "system", "cuda_libraries", "cuda_toolkit", "network", "env"}
    assert records["nvml"]["status"] == "skipped" and "libnvidia-ml.so" in records["nvml"]["error"]
    assert records["torch"]["status"] == "ok"


@pytest.mark.slow
def test_snapshot_to_file_then_check_it(tmp_path):
    out = tmp_path / "me.json"
    res = run_cli(["snapshot", "-o", str(out)])
    assert res.returncode == 0 and res.stdout == "" and "written" in res.stderr
    res = run_cli(["check", "--snapshot", str(out), "--json"])
    doc = json.loads(res.stdout)
    assert doc["schema"] == "envdoctor.check/1"
    assert {"snapshot", "findings", "summary"} <= set(doc)
    assert res.returncode == (1 if doc["summary"]["errors"] else 0)


def test_check_json_contract_keys():
    res = run_cli(["check", "--snapshot", str(fixture_path("b200_driver_575")), "--json"])
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert set(doc["summary"]) == {"errors", "warnings", "infos"}
    f = doc["findings"][0]
    assert {"id", "severity", "category", "title", "detail", "fix", "subjects"} <= set(f)
    assert f["category"] == "driver_too_old" and f["severity"] == "error"
    assert doc["snapshot"]["schema"] == "envdoctor.snapshot/1"


def test_check_text_groups_facts_then_findings():
    res = run_cli(["check", "--snapshot", str(fixture_path("rtx5090_old_torch"))])
    assert res.returncode == 1
    out = res.stdout
    assert out.index("Driver and GPUs") < out.index("PyTorch") < out.index("ERROR ED102")
    assert "\x1b[" not in out  # not a terminal: no colour codes


def test_strict_turns_warnings_into_exit_1():
    path = str(fixture_path("rtx4090_pair"))
    assert run_cli(["check", "--snapshot", path]).returncode == 0
    assert run_cli(["check", "--snapshot", path, "--strict"]).returncode == 1


def test_healthy_machine_exits_0():
    res = run_cli(["check", "--snapshot", str(fixture_path("h200_8x_healthy")), "--strict"])
    assert res.returncode == 0 and "No problems found." in res.stdout


@pytest.mark.slow
def test_no_arguments_without_a_terminal_is_check():
    res = run_cli([], stdin="")
    assert "Probes" in res.stdout and res.returncode in (0, 1)


def test_bad_arguments_exit_2():
    assert run_cli(["check", "--no-such-flag"]).returncode == 2
    res = run_cli(["snapshot", "--python", "/no/such/python"])
    assert res.returncode == 2 and "no such interpreter" in res.stderr


def test_baseline_reports_drift(tmp_path):
    res = run_cli_in_process(["check", "--snapshot", str(fixture_path("h100_fm_mismatch")),
                   "--baseline", str(fixture_path("h100_8x_nvswitch")), "--json"])
    drift = [f for f in json.loads(res.stdout)["findings"] if f["category"] == "drift"]
    assert [f["title"] for f in drift] == ["NVIDIA driver changed: 550.54.15 -> 550.90.07"]


def fleet_of_three(tmp_path, edit):
    """Three H100 nodes named node-0..2; edit(i, data) makes a node differ."""
    paths = []
    for i in range(3):
        data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
        data["host"]["hostname"] = f"node-{i}"
        edit(i, data)
        p = tmp_path / f"n{i}.json"
        p.write_text(json.dumps(data))
        paths.append(str(p))
    return paths


def test_fleet_names_the_odd_node(tmp_path):
    def edit(i, data):
        if i == 2:
            data["torch"]["version"] = "2.4.1+cu121"
            data["torch"]["nccl"] = "2.20.5"

    res = run_cli(["fleet", *fleet_of_three(tmp_path, edit), "--json"])
    doc = json.loads(res.stdout)
    assert doc["schema"] == "envdoctor.fleet/1" and [n["host"] for n in doc["nodes"]] == ["node-0", "node-1", "node-2"]
    cats = {(f["title"], tuple(f["subjects"])) for f in doc["findings"]}
    assert ("torch differs on node-2 (others: 2.5.1+cu124)", ("node-2",)) in cats
    assert ("NCCL differs on node-2 (others: 2.21.5)", ("node-2",)) in cats
    assert all(f["category"] == "fleet_mismatch" for f in doc["findings"])
    assert res.returncode == 1


def test_rules_list_and_explain():
    res = run_cli_in_process(["rules", "list"])
    assert res.returncode == 0 and "ED101" in res.stdout
    res = run_cli_in_process(["rules", "explain", "driver-too-old-for-torch-cuda"])
    assert res.returncode == 0 and "What it detects" in res.stdout and "Fixtures: fires on b200_driver_575" in res.stdout
    assert run_cli_in_process(["rules", "explain", "ED999"]).returncode == 2


def test_cli_never_imports_textual_or_torch():
    code = (
        "import sys, envdoctor.cli, envdoctor.diagnose, envdoctor.probes.runner, envdoctor.rules.engine;"
        "envdoctor.cli.build_parser();"
        "from envdoctor.snapshot import load_snapshot; from envdoctor.diagnose import diagnose;"
        "import os; from envdoctor.settings import Settings; k = Settings.from_env(os.environ).knowledge();"
        f"diagnose(load_snapshot({str(fixture_path('h100_8x_nvswitch'))!r}), k.rules, k.index);"
        "bad = [m for m in ('textual', 'torch', 'rich', 'deepspeed', 'requests') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_report_removes_secrets_and_identity(tmp_path):
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    data["host"]["hostname"] = "secret-host-42"
    data["env"]["HF_TOKEN"] = "hf_abcdefghijklmnopqrstuvwxyz0123"
    data["env"]["WANDB_API_KEY"] = "0123456789abcdef0123456789abcdef01234567"
    data["env"]["PIP_INDEX_URL"] = "https://carol:hunter2@pypi.internal.example/simple"
    data["python"]["executable"] = "/home/carol/venvs/train/bin/python"
    data["network"]["interfaces"][1]["addresses"] = ["10.1.2.3"]
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    res = run_cli_in_process(["report", "--markdown", "--snapshot", str(p)])
    assert res.returncode == 0
    for secret in ("secret-host-42", "hf_abcdefghijklmnopqrstuvwxyz0123", "0123456789abcdef0123456789abcdef01234567",
                   "hunter2", "carol", "10.1.2.3"):
        assert secret not in res.stdout, secret
    assert "<host>" in res.stdout and "/home/<user>/" in res.stdout
    kept = run_cli_in_process(["report", "--no-redact", "--snapshot", str(p)]).stdout
    assert "secret-host-42" in kept and "hunter2" not in kept and "hf_abcdefghijklmnopqrstuvwxyz0123" not in kept


@pytest.mark.parametrize("value", ["/bin/true", "/tmp"])
def test_python_that_is_not_an_interpreter_is_exit_2(value):
    for command in (["check", "--python", value], ["selftest", "--python", value]):
        res = run_cli(command)
        assert res.returncode == 2 and f"--python {value}" in res.stderr and "Traceback" not in res.stderr


def test_selftest_nproc_is_bounded():
    res = run_cli(["selftest", "--nproc", "99999999999999999999"])
    assert res.returncode == 2 and "--nproc must be between 1 and" in res.stderr


SECRETS = ("hf_abc", "0123456789abcdef0123", "S3cretPa55", "p@ssw0rd", "AgEIcHlwaS5vcmcCJDA0OWE5ZjYx", "eyJhbGciOiJIUzI1NiJ9")


def _snapshot_with_secrets(tmp_path):
    data = json.loads(fixture_path("broken_torch_a10g").read_text())
    data["env"] = {"HF_TOKEN": "hf_abc", "WANDB_API_KEY": "0123456789abcdef0123",
                   "PIP_INDEX_URL": "https://bob:S3cretPa55@pypi.corp.example/simple"}
    data["torch"]["error"] = ("ImportError: libcudnn.so.9: cannot open shared object file (from "
                              "https://carol:p@ssw0rd@mirror.example/whl, Authorization: Bearer eyJhbGciOiJIUzI1NiJ9 "
                              "token pypi-AgEIcHlwaS5vcmcCJDA0OWE5ZjYx)")
    p = tmp_path / "secrets.json"
    p.write_text(json.dumps(data))
    return p


def test_no_secret_reaches_any_output(tmp_path):
    p = str(_snapshot_with_secrets(tmp_path))
    outputs = {
        "check --json": run_cli_in_process(["check", "--snapshot", p, "--json"]),
        "check": run_cli_in_process(["check", "--snapshot", p]),
        "report --no-redact": run_cli_in_process(["report", "--no-redact", "--snapshot", p]),
        "fleet --json": run_cli_in_process(["fleet", p, str(fixture_path("h100_8x_nvswitch")), "--json"]),
        "fix --dry-run": run_cli_in_process(["fix", "--snapshot", p, "--dry-run", "--json",
                                  "--index-base", "https://dave:p@ssw0rd@mirror.example/whl"]),
    }
    for name, res in outputs.items():
        assert res.returncode in (0, 1), (name, res.stderr)
        for secret in SECRETS:
            assert secret not in res.stdout + res.stderr, (name, secret)
        if "--json" in name:
            json.loads(res.stdout)  # redaction keeps the document valid
    assert "libcudnn.so.9" in outputs["check"].stdout  # the useful part of the error stays


def test_fleet_compares_driver_release_and_interface_names(tmp_path):
    def edit(i, data):
        if i == 1:
            data["driver"]["version"] = "550.90.07"
        if i == 2:
            for iface in data["network"]["interfaces"]:
                if iface["name"] == "eth0":
                    iface["name"] = "ens5"

    paths = fleet_of_three(tmp_path, edit)
    doc = json.loads(run_cli(["fleet", *paths, "--json"]).stdout)
    titles = {f["title"]: f for f in doc["findings"]}
    assert "NVIDIA driver differs on node-1 (others: 550.54.15)" in titles
    iface = next(f for t, f in titles.items() if t.startswith("network interfaces differs on node-2"))
    assert "NCCL_SOCKET_IFNAME" in iface["fix"] and "envdoctor fix" not in iface["fix"]
    assert not any(t.startswith("driver branch") for t in titles)


@pytest.fixture
def keep_sigterm():
    """main() turns SIGTERM into KeyboardInterrupt for its run; put pytest's handler back afterwards."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def _crash(*args, **kwargs):
    raise RuntimeError("rule engine\nexploded \x1b[31mred\x1b[0m with HF_TOKEN=hf_abcdefghijklmnopqrstuvwx")


def test_unexpected_exception_is_exit_70_with_one_line_and_a_traceback_file(monkeypatch, capsys, keep_sigterm):
    import envdoctor.settings

    monkeypatch.setattr(envdoctor.settings.Settings, "knowledge", _crash)
    assert main(["check", "--snapshot", str(fixture_path("h100_8x_nvswitch"))]) == EXIT_INTERNAL_ERROR == 70
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    match = re.fullmatch(r"envdoctor: internal error: RuntimeError: rule engine exploded \?\[31mred\?\[0m with "
                         r"HF_TOKEN=<redacted> \(traceback in (.+)\)", line)
    assert match, line
    kept = Path(match.group(1))
    assert kept.parent == Path(os.environ["XDG_CACHE_HOME"]) / "envdoctor" / "crash"
    text = kept.read_text()
    assert "Traceback (most recent call last)" in text and "in _crash" in text and "settings.knowledge()" in text
    assert "argv: envdoctor check --snapshot" in text and "hf_abcdefghijklmnopqrstuvwx" not in text


def test_traceback_goes_to_the_temp_directory_when_the_cache_is_not_writable(monkeypatch, capsys, tmp_path,
                                                                             keep_sigterm):
    import envdoctor.commands.rules

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(envdoctor.commands.rules, "run", _crash)
    assert main(["rules", "list"]) == 70
    line = capsys.readouterr().err.strip()
    kept = Path(line.rsplit("(traceback in ", 1)[1].rstrip(")"))
    assert kept.parent == tmp_path / "tmp" and "RuntimeError" in kept.read_text()


def test_a_command_module_that_does_not_import_is_an_internal_error(monkeypatch, capsys):
    import envdoctor.cli as cli

    monkeypatch.setattr(cli, "COMMANDS", {**cli.COMMANDS, "not_there": "envdoctor.commands.not_there"})
    for argv in (["not_there"], ["--help"]):
        assert main(argv) == 70
        err = capsys.readouterr().err
        assert err.startswith("envdoctor: internal error: ModuleNotFoundError: No module named 'envdoctor.commands.not_there'")


def test_every_command_module_is_registered():
    import envdoctor.cli as cli

    modules = {f"envdoctor.commands.{p.stem}" for p in (ROOT / "envdoctor" / "commands").glob("*.py")}
    assert modules - {"envdoctor.commands.__init__", "envdoctor.commands.common"} == set(cli.COMMANDS.values())


def test_each_command_registers_exactly_its_own_name():
    """`envdoctor CMD` imports only CMD's module, so that module must be the one that registers CMD."""
    import envdoctor.cli as cli

    for command in cli.COMMANDS:
        parser = cli.build_parser(only=command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert list(sub.choices) == [command]
    assert list(next(a for a in cli.build_parser()._actions
                     if isinstance(a, argparse._SubParsersAction)).choices) == list(cli.COMMANDS)


def test_check_imports_no_other_command():
    code = ("import sys; from envdoctor.cli import main; rc = main(['check', '--snapshot', {!r}]);"
            "others = sorted(m for m in sys.modules if m.startswith('envdoctor.commands.')"
            " and m not in ('envdoctor.commands.check', 'envdoctor.commands.common'));"
            "print(others); sys.exit(3 if others else 0)".format(str(fixture_path("h100_8x_nvswitch"))))
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("url", ["http://", "https:///whl", "http://mirror .example/whl", "http://mirror/whl\nx",
                                 "ftp://mirror/whl", "file://"])
def test_bad_index_base_is_exit_2(url):
    res = run_cli(["fix", "--snapshot", str(fixture_path("t4_cpu_torch")), "--dry-run", "--index-base", url])
    assert res.returncode == 2 and "--index-base" in res.stderr and "Traceback" not in res.stderr


def test_deeply_nested_json_is_exit_2(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    for args, env in ((["check", "--snapshot", str(deep)], None),
                      (["check", "--snapshot", str(fixture_path("b200_driver_575"))], {"ENVDOCTOR_WHEELS_INDEX": str(deep)}),
                      (["fix", "--snapshot", str(fixture_path("b200_driver_575")), "--dry-run"],
                       {"ENVDOCTOR_WHEELS_INDEX": str(deep)})):
        res = run_cli(args, env=env)
        assert res.returncode == 2 and "nested too deeply" in res.stderr and "Traceback" not in res.stderr

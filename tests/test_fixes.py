"""A fix is a value: its text, argv and JSON are rendered from it, the interpreter an argument of the renderers;
the rules declare it as data (fix_action), and the TUI reads its action."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envdoctor.findings import Finding, for_interpreter
from envdoctor.fixes import (
    ACTIONS,
    Fix,
    Quoted,
    action_problems,
    manual,
    quoted_commands,
    read_prose,
    render_argv,
    render_json,
    render_prose,
    wishes,
)
from envdoctor.rules.registry import RulesError, load_rules, load_rules_from
from envdoctor.rules.rule_fix import rule_fix
from envdoctor.snapshot import load_snapshot
from tests.conftest import ROOT, SNAPSHOTS, diagnose_bundled
from tests.rules.test_loader_errors import good_rule, write_rules

PY = "/opt/my env/bin/python"
Q = "'/opt/my env/bin/python'"

# How `for_interpreter` aimed the prose before fixes were values: regexes over the text. The oracle for the renderer.
_AIMED = ("fix", "undo", "check", "report", "snapshot", "selftest")
_ENVDOCTOR_CMD = re.compile(r"`envdoctor (" + "|".join(_AIMED) + r")\b(?![^`]*--python)")
_PYTHON_CMD = re.compile(r"`(?:python3? -m pip|pip3?|python3?)(?= )")


def _old_aim(text: str, python: str) -> str:
    quoted = shlex.quote(python)
    text = _ENVDOCTOR_CMD.sub(lambda m: f"`envdoctor {m.group(1)} --python {quoted}", text)
    return _PYTHON_CMD.sub(lambda m: f"`{quoted}" + (" -m pip" if "pip" in m.group() else ""), text)


def _finding(remedy: Fix) -> Finding:
    return Finding(id="X", severity="error", category="c", title="t", detail="d", remedy=remedy)


_SPAN_HEADS = ["envdoctor fix", "envdoctor undo", "envdoctor check", "envdoctor report", "envdoctor selftest",
               "envdoctor nccl diagnose", "envdoctor checker", "envdoctor", "pip", "pip3", "pipx", "python",
               "python3", "python -m pip", "python3 -m pip", "python -m pipx", "uv venv", "sudo pip", "nvidia-smi"]
_SPAN_TAILS = ["", " install ninja", " --python /x", " --yes", ",", " -c 'import torch'", " --deepspeed --yes",
               " install \"numpy<2\"", " --markdown", "-x", " a --python b"]
_PLAIN = ["", "Run ", " then ", "; ", " (or ", "), ", " again.", "\n", " e.g. "]
spans = st.builds(lambda h, t: h + t, st.sampled_from(_SPAN_HEADS), st.sampled_from(_SPAN_TAILS))
# Prose as the rules write it: text, then `spans`, each closed; text after a span starts with no command word.
prose = st.builds(lambda first, rest: first + "".join(f"`{s}`{p}" for s, p in rest), st.sampled_from(_PLAIN),
                  st.lists(st.tuples(spans, st.sampled_from(_PLAIN)), max_size=5))


@pytest.mark.slow
@given(st.text())
def test_the_text_renders_as_written_without_an_interpreter(text):
    assert render_prose(manual(text)) == text
    assert render_prose(manual(text), None) == text


@given(prose)
def test_the_text_is_aimed_as_the_regexes_aimed_it(text):
    assert render_prose(manual(text), PY) == _old_aim(text, PY)


def test_the_quoted_commands_are_values():
    fix = manual("Run `pip install ninja`, then `envdoctor check --timeout 9`; `uv venv --python 3.12`.")
    assert quoted_commands(fix) == [Quoted("pip", "pip", " install ninja"),
                                    Quoted("envdoctor", "envdoctor check", " --timeout 9")]
    assert read_prose("a `envdoctor fix --python /p` b") == ("a ", "envdoctor fix --python /p", " b")


def test_argv_for_each_action_with_the_interpreter_as_an_argument():
    fix = Fix("envdoctor_fix", ("deepspeed",), "safe", ("deepspeed",))
    assert render_argv(fix) == [["envdoctor", "fix", "--deepspeed", "--yes"]]
    assert render_argv(fix, PY) == [["envdoctor", "fix", "--python", PY, "--deepspeed", "--yes"]]
    pinned = Fix("envdoctor_fix", ("torch=2.4.1", "deepspeed=0.14.4"), "unsafe")
    assert render_argv(pinned) == [["envdoctor", "fix", "--torch", "2.4.1", "--deepspeed", "0.14.4", "--yes"]]
    assert wishes(pinned) == {"torch": "2.4.1", "deepspeed": "0.14.4"} and wishes(manual("x")) == {}
    assert render_argv(Fix("envdoctor_command", ("undo",)), PY) == [["envdoctor", "undo", "--python", PY]]
    assert render_argv(Fix("envdoctor_command", ("rules", "explain", "ED101")), PY) == [
        ["envdoctor", "rules", "explain", "ED101"]]  # not a command that acts on an interpreter
    assert render_argv(Fix("pip_install", ("numpy<2",))) == [["python", "-m", "pip", "install", "numpy<2"]]
    assert render_argv(Fix("pip_install", ("ninja",)), PY) == [[PY, "-m", "pip", "install", "ninja"]]
    assert render_argv(manual("Reboot."), PY) == []


@pytest.mark.parametrize("kwargs, message", [
    ({"action": "reboot"}, "unknown fix action"),
    ({"applicability": "yolo"}, "unknown fix applicability"),
    ({"arguments": ("x",)}, "a manual fix takes no arguments"),
    ({"applicability": "safe"}, "a safe fix is one envdoctor can run"),
    ({"action": "envdoctor_command", "arguments": ("fix",)}, "that is envdoctor_fix"),
    ({"action": "envdoctor_fix", "arguments": ("numpy",)}, "unknown envdoctor fix wish 'numpy'"),
])
def test_a_malformed_fix_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Fix(**kwargs)


def test_the_finding_renders_its_fix_and_for_interpreter_only_names_the_interpreter():
    fix = Fix("envdoctor_fix", ("deepspeed",), "safe", ("deepspeed",),
              read_prose("Reinstall it: `envdoctor fix --deepspeed --yes`."))
    f = _finding(fix)
    assert (f.fix, f.safety, f.commands) == ("Reinstall it: `envdoctor fix --deepspeed --yes`.", "safe",
                                            [["envdoctor", "fix", "--deepspeed", "--yes"]])
    [aimed] = for_interpreter([f], PY)
    assert aimed.remedy == f.remedy and aimed.python == PY  # the value is kept; the interpreter is an argument
    assert aimed.fix == f"Reinstall it: `envdoctor fix --python {Q} --deepspeed --yes`."
    assert aimed.commands == [["envdoctor", "fix", "--python", PY, "--deepspeed", "--yes"]]
    assert aimed.to_json()["fix_action"] == {"action": "envdoctor_fix", "arguments": ["deepspeed"],
                                             "changes": ["deepspeed"]}


def test_one_json_shape_the_documents_are_views_of():
    f = Finding(id="NCCL-X", severity="error", category="c", title="t", detail="d", remedy=manual("`envdoctor check`"),
                subjects=["nccl"], confidence="high", score=3.14159, evidence=["l"], locations=["f:1"], why=["w"],
                against=["a"], test={"run": "r", "confirms": "c"})
    record = f.record()
    check, nccl = f.to_json(), f.to_nccl_json()
    assert all(check[k] == record[k] for k in check) and all(nccl[k] == record[k] for k in nccl)
    assert nccl["score"] == 3.14 and nccl["evidence_against"] == ["a"] and "fix_action" not in nccl
    schema = json.loads((ROOT / "envdoctor" / "data" / "finding.schema.json").read_text())
    assert set(check) == set(schema["required"]) | {"fix_action"}
    assert schema["properties"]["fix_action"]["properties"]["action"]["enum"] == list(ACTIONS)
    assert _finding(manual("x")).to_nccl_json()["score"] == 0.0  # an unranked finding in the NCCL document
    assert render_json(manual("x")) == {"action": "manual", "arguments": [], "changes": []}


def test_every_bundled_rule_declares_what_its_text_quotes():
    """The data and the prose agree: a rule's fix_action is the command its fix text quotes; a fix that
    `envdoctor fix` may apply (safe, unsafe) is always data."""
    declared = 0
    for rule in load_rules():
        fix = rule_fix(rule)
        if fix.applicability != "display_only":
            assert fix.action in ("envdoctor_fix", "envdoctor_command"), rule.id
        if fix.action == "manual":
            continue
        declared += 1
        [argv] = render_argv(fix)
        quoted = quoted_commands(fix)
        if fix.action == "pip_install":
            assert any(q.program == "pip" and shlex.split(q.rest) == argv[3:] for q in quoted), rule.id
        else:
            assert any(q.program == "envdoctor" and (q.head + q.rest).split() == argv for q in quoted), rule.id
        assert fix.changes, rule.id
    assert declared >= 14


def test_findings_carry_their_rules_fix_action():
    seen = set()
    for path in sorted(SNAPSHOTS.glob("*.json")):
        for f in for_interpreter(diagnose_bundled(load_snapshot(path)), PY):
            if f.remedy.action == "envdoctor_fix":
                assert f.commands[0][:2] == ["envdoctor", "fix"] and "{" not in " ".join(f.commands[0])
            seen.add(f.remedy.action)
    assert {"envdoctor_fix", "manual"} <= seen


@pytest.mark.parametrize("bad, message", [
    ({"fix_action": {"action": "reboot"}}, "fix_action: action must be one of"),
    ({"fix_action": {"action": "pip_install", "arguments": "ninja"}}, "fix_action: arguments must be a list of text"),
    ({"fix_action": {"action": "envdoctor_fix", "arguments": ["numpy"]}}, "unknown envdoctor fix wish"),
    ({"fix_action": {"action": "pip_install", "wat": 1}}, "fix_action: takes {action, arguments, changes}"),
    ({"fix_action": {"action": "pip_install", "arguments": ["{gpu.index}"]}}, "fix_action: template '{gpu.index}'"),
    ({"fix_safety": "safe"}, "a safe fix needs a fix_action"),
])
def test_a_malformed_fix_action_is_named(tmp_path, bad, message):
    d = write_rules(tmp_path, [good_rule(**bad)])
    with pytest.raises(RulesError) as exc:
        load_rules_from(d)
    assert any("custom.json: ED201" in p and message in p for p in exc.value.problems), exc.value.problems


def test_a_rule_fix_action_fills_its_templates(tmp_path):
    d = write_rules(tmp_path, [good_rule(fix="`pip install shm{needed_mib}`",
                                         fix_action={"action": "pip_install", "arguments": ["shm{needed_mib}"],
                                                     "changes": ["shm"]})])
    [rule] = load_rules_from(d)
    fix = rule_fix(rule, lambda text: text.replace("{needed_mib}", "==1"))
    assert render_argv(fix, PY) == [[PY, "-m", "pip", "install", "shm==1"]]
    assert render_prose(fix, PY) == f"`{Q} -m pip install shm==1`"
    assert action_problems(rule.fix_action) == []


def test_the_tui_reads_the_fix_action_not_argv():
    from envdoctor.tui.panes import fix_wishes

    assert fix_wishes(_finding(Fix("envdoctor_fix", ("deepspeed",), "safe"))) == {"deepspeed": ""}
    assert fix_wishes(_finding(Fix("envdoctor_fix", (), "safe"))) == {"deepspeed": None}
    assert fix_wishes(_finding(Fix("envdoctor_fix", ("deepspeed=0.14.4",), "safe"))) == {"deepspeed": "0.14.4"}
    assert fix_wishes(_finding(Fix("envdoctor_fix", (), "unsafe"))) is None
    assert fix_wishes(_finding(Fix("envdoctor_command", ("undo",), "safe"))) is None
    # prose that quotes `envdoctor fix` is not an action
    assert fix_wishes(_finding(manual("`envdoctor fix --yes`"))) is None

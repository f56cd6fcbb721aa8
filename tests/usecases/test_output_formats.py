"""Adding an output format takes one registration (docs/extend-tui-and-output.md): every command that prints a
document offers it, with its help, and prints the same document through it; two formats at once are bad input."""

from __future__ import annotations

import json
import signal
import sys

import pytest

from envdoctor import cli
from envdoctor.present import output
from envdoctor.present.output import DocumentFormat, register_format
from tests.conftest import ROOT, fixture_path

# The commands that print a document, as argv up to the options.
DOCUMENT_COMMANDS = {
    "check": ["check"], "fix": ["fix"], "fleet": ["fleet"], "nccl": ["nccl", "diagnose"], "undo": ["undo"],
}


def flat(doc) -> None:
    """A test-only format: one `key=JSON` line per top-level key."""
    sys.stdout.write("".join(f"{k}={json.dumps(v, sort_keys=True)}\n" for k, v in doc.items()))


@pytest.fixture
def flat_format():
    register_format(DocumentFormat("flat", "print the {schema} document as key=JSON lines", flat))
    before = signal.getsignal(signal.SIGTERM)  # main() turns SIGTERM into KeyboardInterrupt for its run
    yield
    signal.signal(signal.SIGTERM, before)
    del output.DOCUMENT_FORMATS["flat"]


def parse_flat(text: str) -> dict:
    return {k: json.loads(v) for k, v in (line.split("=", 1) for line in text.splitlines())}


@pytest.mark.parametrize("command", sorted(DOCUMENT_COMMANDS))
def test_a_registered_format_is_offered_by_every_command_with_a_document(flat_format, command):
    sub = cli.build_parser(command)._subparsers._group_actions[0].choices[command]
    if command == "nccl":
        sub = sub._subparsers._group_actions[0].choices["diagnose"]
    helps = {a.option_strings[0]: a.help for a in sub._actions if a.option_strings}
    assert helps["--flat"].startswith("print the envdoctor.") and helps["--flat"].endswith("document as key=JSON lines")
    assert "--json" in helps  # and the JSON one stays, with its own help


def test_each_document_comes_out_in_the_new_format(flat_format, capsys):
    snap = str(fixture_path("rtx5090_old_torch"))
    assert cli.main(["check", "--snapshot", snap, "--json"]) == 1
    as_json = json.loads(capsys.readouterr().out)
    assert cli.main(["check", "--snapshot", snap, "--flat"]) == 1
    assert parse_flat(capsys.readouterr().out) == as_json
    log = str(ROOT / "tests" / "fixtures" / "nccl" / "driver_too_old.log")
    assert cli.main(["nccl", "diagnose", log, "--flat"]) == 1
    assert parse_flat(capsys.readouterr().out)["schema"] == "envdoctor.nccl/1"
    assert cli.main(["fix", "--snapshot", snap, "--flat"]) == 0
    assert parse_flat(capsys.readouterr().out)["schema"] == "envdoctor.plan/1"


def test_without_the_registration_there_is_no_such_flag(capsys):
    assert cli.main(["check", "--snapshot", str(fixture_path("rtx5090_old_torch")), "--flat"]) == 2
    assert "unrecognized arguments: --flat" in capsys.readouterr().err


def test_two_formats_at_once_are_bad_input(flat_format, capsys):
    assert cli.main(["check", "--snapshot", str(fixture_path("rtx5090_old_torch")), "--json", "--flat"]) == 2
    assert "--json and --flat are two outputs: give one" in capsys.readouterr().err

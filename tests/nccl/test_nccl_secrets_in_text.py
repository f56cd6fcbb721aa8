"""Secrets in what an NCCL diagnosis prints (fuzz seeds of issue 30): a rule's text is scrubbed before it is
wrapped (a line break between `--password` and its value hid the value), a token glued in front of NCCL's
`host:pid:tid [dev]` prefix is not taken for a host name, and a document's keys are scrubbed like its values.
The sample secrets are put together at run time, so no scanner mistakes this file for a leak."""

from __future__ import annotations

import dataclasses
import json

from envdoctor.fixes import manual
from envdoctor.nccl import diagnose_text
from envdoctor.present.nccl import render_nccl
from envdoctor.present.style import Style
from envdoctor.redact import scrub_document

SECRET = "Wr4pped" + "Secret99"
LOG = ("host-a:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
       "host-a:1:1 [0] NCCL WARN Cuda failure 'out of memory'\n"
       "RuntimeError: NCCL error: unhandled cuda error, NCCL version 2.18.1\n")


def test_a_secret_in_a_rule_text_is_scrubbed_before_it_is_wrapped():
    report = diagnose_text(LOG)
    assert report.findings
    # "--password" ends the first wrapped line, its value starts the next
    long = "word " * 16 + "--password " + SECRET + " and more words after it"
    fd = dataclasses.replace(report.findings[0], why=[long], against=[long], remedy=manual(long),
                             test={"run": long, "confirms": long})
    text = render_nccl(dataclasses.replace(report, findings=[fd]), Style(False))
    assert "--password" in text and SECRET not in text, text


def test_a_token_glued_before_the_nccl_prefix_is_no_host():
    token = "Gl" + "uedBearerToken0"
    log = (f"junk Authorization: Bearer {token}:51:51 [0] NCCL INFO cudaDriverVersion 12040\n"
           "[default0]: worker-1:5:5 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n" + LOG)
    report = diagnose_text(log)
    hosts = report.facts.as_dict()["hosts"]
    assert token not in json.dumps(report.facts.as_dict()), hosts
    assert {"host-a", "worker-1"} <= set(hosts), hosts


def test_a_documents_keys_are_scrubbed_too():
    key = "hf_" + "KeyTokenAbCdEfGhIjKlMnOp"
    doc = scrub_document({"network": {key: "x", "name": "lo"}})
    assert key[3:] not in json.dumps(doc) and doc["network"]["name"] == "lo"

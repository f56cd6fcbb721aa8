"""Secret shapes from maintained secret scanners (gitleaks' default rules, detect-secrets' plugins) and the places
issue 30.4 found them surviving: after a terminal colour code, after a JSON-escaped line break, in signed URLs,
netrc, `wandb login`, webhooks, docker's config, GCP service-account files. And what is no secret stays (issue 31).
The sample secrets are put together at run time, so no scanner mistakes this file for a leak."""

from __future__ import annotations

import pytest

from envdoctor import cli
from envdoctor.redact import REDACTED, scrub_document, scrub_secrets

A40 = "0123456789abcdef0123456789abcdef01234567"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123"
GHP = "ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

# (text, the secret in it)
SHAPES = [
    ("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&sig=" + "AbCd%2BEfGh1234IjKl%3D" + "&se=2027",
     "AbCd%2BEfGh1234IjKl%3D"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=" + A40[:32] + "&X-Amz-Date=1",
     A40[:32]),
    ("https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4&X-Goog-Signature=" + A40 + "&x=1", A40),
    ("PIP_INDEX_URL=https://h/simple?X-Amz-Credential=" + "AKIAEXAMPLEKEY12/2026" + "&a=b", "AKIAEXAMPLEKEY12/2026"),
    ("machine pypi.example.com login alice password " + "s3cr3tNetrcPw", "s3cr3tNetrcPw"),
    ("machine h\n  login alice\n  password " + "an0therNetrcPw", "an0therNetrcPw"),
    ("$ wandb login " + A40, A40),
    ("wandb login --relogin " + A40, A40),
    ("https://hooks.slack.com/services/T" + "01ABCDEFG/B01ABCDEFG/" + "abcdefghijklmnopqrstuvwx",
     "abcdefghijklmnopqrstuvwx"),
    ("https://discord.com/api/webhooks/" + "123456789012345678/" + "AbCdEfGhIjKlMnOpQrStUvWxYz-_0123456789",
     "AbCdEfGhIjKlMnOpQrStUvWxYz-_0123456789"),
    ("NGC_API_KEY is " + "nvapi-" + "A2p0J7jEUTGOyxcj20NMsKZs6vv_5pQBNvPpAxtrgnwDv5RsVSM0dor5uMGPyKWa",
     "A2p0J7jEUTGOyxcj20NMsKZs6vv_5pQBNvPpAxtrgnwDv5RsVSM0dor5uMGPyKWa"),
    ('{"auths": {"nvcr.io": {"auth": "' + "JG9hdXRodG9rZW46bnZhcGk=" + '"}}}', "JG9hdXRodG9rZW46bnZhcGk="),
    ('{"type": "service_account", "private_key_id": "' + A40 + '"}', A40),
    ("key: gsk_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01", "AbCdEfGhIjKlMnOpQrStUvWxYz01"),
    ("ANTHROPIC=sk-ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    # a token glued to what hides its start
    ("\x1b[31m" + HF + "\x1b[0m", HF[3:]),
    ("\x1b]0;" + GHP + "\x07", GHP[4:]),
    ('{"log": "line one\\n' + HF + ' and more"}', HF[3:]),
    ("escaped colour \\x1b[1m" + GHP, GHP[4:]),
    ("\\u001b[32m" + HF, HF[3:]),
    # an escape inside a URL's credentials (fuzz nccl/900549): the terminal shows user:password@host
    ("https://fuzzu\x1b]0;title\x07ser:" + "Pa55Escaped" + "@mirror.example/simple", "Pa55Escaped"),
    ("https://u\x1b[31m:" + "Pa55Colour" + "@h/x", "Pa55Colour"),
    # a byte lost between the scheme and its slashes (fuzz nccl/1301456): still user:password@host
    ("peer https:\ufffd\ufffd//fuzzuser:" + "Pa55Lost" + "@mirror.example/simple", "Pa55Lost"),
    # a secret glued to an escape cut short, its first letter read as the escape's end (fuzz nccl/1403526)
    ("WARN \x1b[0wandb login " + A40 + "m Cuda failure", A40),
    ("WARN \x1b[0--password " + "Pa55Cut" + " x", "Pa55Cut"),
    ("WARN \x1b[0" + HF + " x", HF[3:]),
]


@pytest.mark.parametrize("text,secret", SHAPES, ids=[f"shape{i}" for i in range(len(SHAPES))])
def test_each_scanner_shape_is_redacted(text, secret):
    out = scrub_secrets(text)
    assert secret not in out and REDACTED in out, out


@pytest.mark.parametrize("text", [
    "--python /etc/passwd: not an executable file",
    "/etc/passwd: invalid JSON at line 1 column 1: Expecting value",
    "passwd: not an executable file",
    "token: unknown (not probed)",
    "the password is required",
    "password: ${PASSWORD}",
    "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "signature=short",
    "sig=abc",
])
def test_what_is_no_credential_is_not_redacted(text):
    assert scrub_secrets(text) == text


def test_a_snapshot_index_url_with_a_signature_is_scrubbed_in_documents():
    doc = {"env": {"PIP_INDEX_URL": SHAPES[1][0]}, "nested": [SHAPES[0][0]]}
    text = repr(scrub_document(doc))
    assert SHAPES[1][1] not in text and SHAPES[0][1] not in text


def test_nccl_diagnose_prints_no_token_glued_to_an_escape(tmp_path, capsys):
    log = tmp_path / "rank0.log"
    log.write_text("host:1:2 [0] NCCL INFO Bootstrap : Using eth0\n"
                   f"host:1:2 [0] NCCL WARN \x1b[31m{HF} Cuda failure 'out of memory'\n"
                   f'{{"msg": "x\\n{GHP}"}}\n'
                   "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1, unhandled cuda error\n")
    code = cli.main(["nccl", "diagnose", str(log)])
    out = capsys.readouterr()
    assert code in (0, 1)
    assert HF[3:] not in out.out + out.err and GHP[4:] not in out.out + out.err
    code = cli.main(["nccl", "diagnose", "--json", str(log)])
    out = capsys.readouterr()
    assert HF[3:] not in out.out and GHP[4:] not in out.out


def test_a_value_whose_secret_name_a_glued_token_swallowed_is_redacted_too():
    """fuzz nccl/220: `ghp_...` glued to `HF_TOKEN=VALUE`: the token's shape took the name, and the value leaked."""
    from envdoctor.redact import scrub_secrets

    canary = "Canary" + "Q7x9Z2tok"
    text = "[W socket.cpp:601ghp_" + "A" * 36 + "HF_TOKEN=" + canary + "] [c10d] failed"
    assert canary not in scrub_secrets(text)

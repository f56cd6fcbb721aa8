"""Removing secrets (always) and identifying details (for shared reports) from text and env values.

Every pattern runs in linear time: no unbounded repetition sits in front of a literal that may never
come, and every match starts where a token starts, so a long run of letters or base64 is read once.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Dict, Iterable, List, Mapping, Tuple

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSW|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE|SESSION)", re.I)

# Well-known token shapes, wherever they stand; each starts where a token starts.
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|"
    r"(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|ya29\.[0-9A-Za-z_-]{20,}|"
    r"dop_v1_[a-f0-9]{32,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}|"
    # gitleaks' and detect-secrets' shapes for what envdoctor's users hold: Groq, Anthropic, Alibaba, age,
    # 1Password, Artifactory, Azure AD client secrets
    r"gsk_[A-Za-z0-9]{20,}|sk-ant-[a-z0-9]{2,12}-[A-Za-z0-9_-]{20,}|LTAI[A-Za-z0-9]{20}|"
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}|ops_eyJ[A-Za-z0-9+/]{100,}|AKCp[A-Za-z0-9]{60,}|[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})")
# Shapes whose prefix is distinctive enough to be found glued to the word before it ("initializathf_...", a log
# line that lost its space): Hugging Face, GitHub, GitLab, Slack, npm, PyPI, NGC.
_GLUED_SHAPES = re.compile(
    r"(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|"
    r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{20,}|"
    r"nvapi-[A-Za-z0-9_-]{20,}"
    # what is glued after it goes too: "hf_...ghp_..." must not leave the second token's body
    r")[A-Za-z0-9_-]*")
# The patterns below read an ASCII-lowercased copy of the text (the same length, so a match's place is its
# place in the text): no pattern needs re.I, which would make each of them several times slower.
# Group 1 is kept, group 2 (the value) becomes REDACTED.
# NAME=value, NAME: value and "NAME": "value" where NAME says it is secret (HF_TOKEN=..., "WANDB_API_KEY": "...").
# The match starts at the secret word itself (what stands before it is kept), and the value stops at a
# quote, space, backslash or separator, so JSON text stays valid.
_ASSIGN = r"[\"']?[ \t]{0,8}[=:][ \t]{0,8}[\"']?"
# A secret word that ends a path (/etc/passwd: ..., C:\\x\\token: ...) names a file, not a secret.
_NAMED = re.compile(
    r"((?<![/\\])(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|credential|auth[_-]?key|private[_-]?key)"
    r"(?:[_-][a-z0-9]{1,32}){0,4}" + _ASSIGN + r")(?!<redacted>)([^\s\"'&;,\\]+)")
# key=<hex or base64 of 16+ characters>: AccountKey=..., SharedAccessKey=..., ssh_key=..., key=...
_KEY = re.compile(r"(key" + _ASSIGN + r")(?!<redacted>)([a-z0-9+/=_-]{16,})")
# Authorization: token X, Authorization: Bearer X, "authorization": "Basic X"
_AUTH_HEADER_AT = re.compile(r"((?:proxy-)?authorization" + _ASSIGN
                             + r")(?!<redacted>)((?:[a-z]{2,16}[ \t]+)?[^\s\"',;\\]+)")
_AUTH_HEADER = re.compile(r"(?<![a-z0-9_-])" + _AUTH_HEADER_AT.pattern)
_SCHEME_AT = re.compile(r"((?:bearer|basic)[ \t]+)(?!<redacted>)([a-z0-9._~+/=-]{8,})")
_SCHEME = re.compile(r"(?<![a-z0-9_-])" + _SCHEME_AT.pattern)
# --password X, --password=X, -api-key X, --hf-token X
# (a double dash may be glued to the word before it: "W--password X" in a log that lost its space)
_FLAG = re.compile(r"((?:--|(?<![a-z0-9_-])-)(?:[a-z0-9]{1,20}-){0,3}"
                   r"(?:password|passwd|pass|pwd|token|secret|api-?key|access-?key|client-secret)(?:[ \t]+|=))"
                   r"(?![-<])([^\s\"'\\]+)")
# Signed URLs: Azure SAS (sig=), S3 (X-Amz-Signature, X-Amz-Credential), GCS (X-Goog-Signature, X-Goog-Credential)
_SIGNATURE = re.compile(r"((?:^|[?&;,\s\"'])(?:sig|signature|x-(?:amz|goog)-(?:signature|credential))=)"
                        r"(?!<redacted>)([^\s&\"'\\<>#]{6,})")
# netrc: `machine HOST login USER password SECRET` (one line or one word a line); `wandb login KEY`.
# Each starts with its literal (a leading look-behind would be tried at every character).
_NETRC = re.compile(r"((?:machine|default|login)[ \t][^\n]{0,200}?[ \t]password[ \t]+|(?:^|\n)[ \t]*password[ \t]+)"
                    r"(?!<redacted>)([^\s\"'\\]+)")
_LOGIN_KEY = re.compile(r"((?:wandb|redacted>)[ \t]+login[ \t]+(?:--?[a-z-]+(?:[ \t]+|=)(?:[^\s-][^\s]*[ \t]+)?)*)"
                        r"(?!<redacted>)([^\s\"'\\-][^\s\"'\\]{7,})")
# docker's config.json: "auth": "base64(user:password)"
_DOCKER_AUTH = re.compile(r"(\"(?:auth|identitytoken|registrytoken)\"[ \t]*:[ \t]*\")(?!<redacted>)([^\"\\]+)")
# Slack and Discord webhooks: the path is the credential
_WEBHOOK = re.compile(r"((?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks)/)"
                      r"(?!<redacted>)([a-z0-9+/_-]{20,})")
# Words that stand where a value would and are none ("passwd: not an executable file", "token: unknown"), and
# placeholders ($VAR, ${VAR}, %VAR%, <...>): kept, as secret scanners' allow lists keep them.
_NOT_A_VALUE = re.compile(r"(?:not|no|none|null|nil|true|false|is|are|was|a|an|the|of|for|in|on|to|and|or|invalid|"
                          r"missing|required|unknown|unset|empty|cannot|error|ok|yes|set|given|found|needed|"
                          r"expected|changed|removed|\*+|x+)[.,:;]?|\$\{?[a-z_][a-z0-9_]*\}?|%[a-z_][a-z0-9_]*%|<[^>]*>?")
# What hides a token's start from the patterns: terminal escapes (ESC [ 31 m, OSC's introducer and terminator),
# their written forms (\x1b[, \u001b[, \033[, \e[), JSON and C escapes (\n, \t, \u0041) and control characters.
# The patterns read a copy with these blanked out (same length: a match's place is its place in the text).
_HIDING = re.compile(r"\x1b\[[0-?]{0,32}[ -/]{0,8}[@-~]?|\x1b\][0-9]{0,4};?|\x1b[@-Z\\^_]|\x9b[0-?]{0,32}[ -/]{0,8}[@-~]?|"
                     r"\x9d[0-9]{0,4};?|\\(?:x1[bB]|u001[bB]|033|e)\[[0-?]{0,32}[ -/]{0,8}[@-~]?|\\u[0-9a-fA-F]{4}|"
                     r"\\x[0-9a-fA-F]{2}|\\[nrtbfv0\"'/\\]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# scheme://user:password@host: everything up to the last '@' before the host (passwords may hold '@').
# (one slash or three as well: a path made of a URL, "https:/user:pw@host", keeps its credentials; and "//" without
# its scheme's colon: "https:\ufffd//user:pw@host", a log with a byte lost in it)
_URL_CREDENTIALS = re.compile(r"(?::/{1,3}|//)(?!<redacted>@)([^/\s\"'<>]*)@")
# user:password@host without its scheme (a URL whose start was cut or broken apart): the password, up to the last
# '@' before a host name.
# Not: mailto:/email: addresses, a value of digits and commas (DeepSpeed's --include=10.0.0.1:0,1@10.0.0.2), code
# (q[:,:d]@k.transpose(...)): the host must end where a host ends.
_USERINFO = re.compile(r"(:)(?<=[^\s:/\"'<>]:)(?<!mailto:)(?<!email:)(?!<redacted>@)(?![\d,]+@)"
                       r"([^\s/:\"'<>()\[\]{}]{1,256})"
                       r"@(?=(?:(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]+|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?![\w.(-])"
                       r"|\[[0-9a-f:.]+\])")
# scheme://user:password with its '@host' cut off (an excerpt, a truncated line): a port is digits, a password is not.
_CUT_USERINFO = re.compile(r"(://[^/\s:@\"'<>\[\]]{1,64}:)(?![0-9]{1,5}(?![0-9a-z_]))(?!<redacted>)"
                           r"([^/\s@\"'<>;,]{6,256})(?![^\s/@]*@)")
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# What a PEM body holds: base64, line breaks (real or JSON-escaped), and header lines such as Proc-Type.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nr])*")

# Environment variables worth recording: they change how CUDA, NCCL, torch and DeepSpeed behave.
ENV_PREFIXES = ("CUDA_", "NCCL_", "TORCH_", "PYTORCH_", "NVIDIA_", "CUDNN_", "DS_", "GLOO_", "UCX_",
                "FI_", "TORCHINDUCTOR_", "TRITON_", "NV_", "OMPI_", "PMIX_", "SLURM_JOB_GPUS", "HIP_", "ROCR_")
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "MASTER_ADDR",
             "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMP_NUM_THREADS",
             "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "ENVDOCTOR_TORCH_INDEX", "CC", "CXX",
             "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE")


def _pem_spans(text: str, spans: List[Tuple[int, int]]) -> None:
    """A private key block goes whole: to its END line, or to where its body stops when it has none."""
    if "PRIVATE KEY" not in text:
        return
    pos = 0
    for begin in _PEM_BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        body = _PEM_BODY.match(text, begin.end())
        stop = body.end() if body else begin.end()
        end = _PEM_END.search(text, begin.end(), stop)
        pos = end.end() if end else stop
        spans.append((begin.start(), pos))


_MAY_HIDE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\\]")


def _unhidden(text: str, fill: str = " ") -> str:
    """`text` with what hides a token's start replaced by `fill`, the same length (see _HIDING)."""
    if not _MAY_HIDE.search(text):
        return text
    return _HIDING.sub(lambda m: fill * len(m.group()), text)


# A secret's name may stand inside the value of the one before it ("wandb login KEYwandb login KEY2", the value
# runs to the space): after a match, the search goes on from the value's start, at most this far before its end,
# so a run of names ("key=key=key=...") is not read again and again.
_CHAIN_WINDOW = 256


def _find_spans(view: str, pattern: re.Pattern, group: int, spans: List[Tuple[int, int]]) -> None:
    """Append to `spans` the place of `group` of each match of `pattern` in `view` (a blanked, maybe lowercased copy
    of the text), placeholders and words that are no value left out."""
    search = pattern.search
    pos = 0
    while True:
        m = search(view, pos)
        if m is None:
            return
        start, end = m.span(group)
        if not (group and _NOT_A_VALUE.fullmatch(view, start, end)):
            spans.append((start, end))
        pos = max(start, m.end() - _CHAIN_WINDOW) if group else end


# What follows a redaction as a value follows a name ("ghp_...HF_TOKEN=VALUE": the token's pattern took the name
# with it, so its value no longer follows a secret name): "<redacted>=VALUE" loses VALUE too.
_AFTER_REDACTION = re.compile(r"[ \t]{0,8}[=:][ \t]{0,8}[\"']?(?!<redacted>)([^\s\"'&;,\\\]]+)")
# What is glued to a redaction up to the '@' before a host: the rest of a URL's credentials whose start the redaction
# took ("https://u:https://h/?sig=<redacted>&a=1PW@mirror.example").
_BEFORE_HOST = re.compile(r"([^\s/@\"'<>]{1,256})@(?:(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]+|\d{1,3}(?:\.\d{1,3}){3})(?![\w.(-])")
# A word of 16 or more letters, digits and '_' with three of each, right after a secret (one blank between): a second
# key where a header or a login took one ("Authorization: Bearer <redacted> KEY", "login <redacted> KEY"). A model
# id (Llama-3.1-8B-Instruct), a triple (x86_64-linux-gnu) or a word (sm_90a_compute_capability) is none.
_TOKEN_AFTER = re.compile(r"[ \t]([a-z0-9_]{16,256})(?=[\s,;\"')\].-]|$)")
_LETTER = re.compile(r"(?:[^a-z]*[a-z]){3}")  # at least three letters and three digits: a key, not a name
_DIGIT = re.compile(r"(?:[^0-9]*[0-9]){3}")
_REDACTED_NAME_VALUE = re.compile(r"(<redacted>" + _AFTER_REDACTION.pattern + ")")


def _union(spans: List[Tuple[int, int]], lower: str) -> List[Tuple[int, int]]:
    """The spans sorted, those that overlap or touch made one, each grown by a value that follows it."""
    spans.sort()
    merged: List[Tuple[int, int]] = []
    i, n = 0, len(spans)
    while i < n:
        start, end = spans[i]
        i += 1
        while True:
            while i < n and spans[i][0] <= end:
                end = max(end, spans[i][1])
                i += 1
            after = _AFTER_REDACTION.match(lower, end)
            if after is None or _NOT_A_VALUE.fullmatch(after.group(1)):
                break
            end = after.end()
        userinfo = _BEFORE_HOST.match(lower, end)  # "<redacted>&a=1PW@host": the rest of one credential
        if userinfo is not None:
            end = userinfo.end(1)
        token = _TOKEN_AFTER.match(lower, end)  # "Bearer <redacted> TOKEN": a key-like word right after a secret
        if token is not None and _LETTER.search(token.group(1)) and _DIGIT.search(token.group(1)):
            end = token.end(1)
        merged.append((start, end))
    return merged


# The shapes read a blanked copy of the text, the value patterns its lowercased form (group 2 is the value).
SHAPE_PATTERNS = ((_URL_CREDENTIALS, 1), (_SHAPES, 0), (_GLUED_SHAPES, 0))
VALUE_PATTERNS = (_LOGIN_KEY, _NETRC, _SIGNATURE, _DOCKER_AUTH, _WEBHOOK, _AUTH_HEADER, _FLAG, _NAMED, _KEY, _SCHEME,
                  _USERINFO, _CUT_USERINFO, _REDACTED_NAME_VALUE)


# A CSI sequence whose final byte (not SGR's `m`) is glued to a word: it may be that word's first letter.
_CSI_GLUED = re.compile(r"(?:\x1b\[|\x9b|\\(?:x1[bB]|u001[bB]|033|e)\[)[0-?]{0,32}[ -/]{0,8}[@-ln-~][\w-]")
_CSI_PARAMETERS = re.compile(r"(?:\x1b\[|\x9b|\\(?:x1[bB]|u001[bB]|033|e)\[)[0-?]{0,32}")


def _blank_parameters(m: re.Match) -> str:
    """A hiding sequence blanked, but a CSI's intermediate and final bytes kept."""
    seq = m.group()
    csi = _CSI_PARAMETERS.match(seq)
    return " " * csi.end() + seq[csi.end():] if csi else " " * len(seq)


def secret_spans(text: str) -> List[Tuple[int, int]]:
    """Where the secrets in `text` are: every pattern is matched against the text as given (seen through escapes),
    so no redaction can hide another secret's name, and what they find is joined into disjoint spans."""
    spans: List[Tuple[int, int]] = []
    _pem_spans(text, spans)
    view = _unhidden(text)
    for pattern, group in SHAPE_PATTERNS:
        _find_spans(view, pattern, group, spans)
    if view is not text and "@" in text:
        # an escape inside a URL's credentials (`https://us\x1b]0;t\x07er:PW@host`) is no end of them: the
        # terminal shows `user:PW@host`
        _find_spans(_unhidden(text, "\x01"), _URL_CREDENTIALS, 1, spans)
    lower = view.translate(_LOWER)
    for pattern in VALUE_PATTERNS:
        _find_spans(lower, pattern, 2, spans)
    if view is not text and _CSI_GLUED.search(text):
        # `\x1b[0wandb login KEY`: the escape's final byte may be a secret's first letter (printed escaped, it is
        # read as one): the patterns read a second copy that keeps what follows the parameters
        kept = _HIDING.sub(_blank_parameters, text)
        for pattern, group in SHAPE_PATTERNS:
            _find_spans(kept, pattern, group, spans)
        kept = kept.translate(_LOWER)
        for pattern in VALUE_PATTERNS:
            _find_spans(kept, pattern, 2, spans)
    if not spans:
        return spans
    merged = _union(spans, lower)
    for _ in range(8):  # a chain of glued headers: each round finds the next
        glued = _glued_headers(lower, merged)
        if not glued:
            break
        merged = _union(merged + glued, lower)
    return merged


# A header's name needs a token start before it ("preauthorization: x" is none), but a secret's end is one too:
# "...KEYAuthorization: token X", "Bearer Xbearer Y". Looked for only inside and right after what is redacted.
_GLUED_HEADERS = ((_AUTH_HEADER_AT, ("authorization",)), (_SCHEME_AT, ("bearer", "basic")))


def _glued_headers(lower: str, merged: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The values of the headers that start inside a redacted span or at its end, where not yet redacted."""
    found: List[Tuple[int, int]] = []
    for start, end in merged:
        for pattern, words in _GLUED_HEADERS:
            for word in words:
                at = lower.find(word, max(start, end - _CHAIN_WINDOW), end + len(word))
                while at >= 0:
                    m = pattern.match(lower, at)
                    if m and m.end(2) > end and not _NOT_A_VALUE.fullmatch(m.group(2)):
                        found.append(m.span(2))
                    at = lower.find(word, at + 1, end + len(word))
    return found


def scrub_secrets(text: str) -> str:
    """Secrets never leave the machine: private keys, tokens, passwords, credentials inside URLs. The patterns see
    through terminal escapes and JSON escapes (`\x1b[31mhf_...`, `...\\nghp_...`), so a token glued to one goes too.
    Each secret's place is found in the text as given and all are replaced at once (see `secret_spans`)."""
    spans = secret_spans(text)
    if not spans:
        return text
    out: List[str] = []
    pos = 0
    for start, end in spans:
        out += [text[pos:start], REDACTED]
        pos = end
    out.append(text[pos:])
    return "".join(out)


_NAMED_KEY = re.compile(r"(?i)(token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|credential|authorization)")


@functools.lru_cache(maxsize=4096)  # a document's keys are a few names, repeated
def _scrub_short_key(key: str) -> str:
    return scrub_secrets(key)


def _scrub_key(key: Any) -> Any:
    """A key is text too: a snapshot's planted `{"hf_...": ...}` must not print its token."""
    if not isinstance(key, str):
        return key
    return _scrub_short_key(key) if len(key) <= 128 else scrub_secrets(key)


MAX_DEPTH = 100  # deeper than any document envdoctor writes; what is deeper is dropped, not recursed into


def scrub_document(doc: Any, _depth: int = 0) -> Any:
    """A JSON-ready document with the secrets out of every string; a secret-named key keeps no value. What is
    nested deeper than MAX_DEPTH becomes "<nested too deeply>"; NaN and Infinity become null."""
    if isinstance(doc, str):
        return scrub_secrets(doc)
    if isinstance(doc, float) and doc - doc != 0:  # NaN or Infinity: no value, and no JSON either
        return None
    if isinstance(doc, (list, dict)) and _depth >= MAX_DEPTH:
        return "<nested too deeply>"
    if isinstance(doc, list):
        return [scrub_document(v, _depth + 1) for v in doc]
    if isinstance(doc, dict):
        return {_scrub_key(k): REDACTED if isinstance(v, str) and v and isinstance(k, str) and _NAMED_KEY.search(k)
                else scrub_document(v, _depth + 1) for k, v in doc.items()}
    return doc


def env_value(name: str, value: str) -> str:
    """An environment value as it may be shown: secret-named variables never are."""
    return REDACTED if _SECRET_NAME.search(name) else scrub_secrets(value)


def relevant_env(environ: Mapping[str, str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name in sorted(environ):
        if not (name.startswith(ENV_PREFIXES) or name in ENV_NAMES):
            continue
        out[name] = env_value(name, environ[name])
    return out


_TOKEN_CHARS = "A-Za-z0-9_-"


def scrub_identity(text: str, hostnames: Iterable[str] = (), users: Iterable[str] = ()) -> str:
    """For shared reports: host names, user names, home paths, IP and MAC addresses; names as whole tokens
    only (a host named `vm` leaves "NVML" alone)."""
    for name in sorted({h for h in hostnames if h and len(h) > 1}, key=len, reverse=True):
        text = re.sub(rf"(?<![{_TOKEN_CHARS}]){re.escape(name)}(?![{_TOKEN_CHARS}])", "<host>", text, flags=re.I)
    for user in sorted({u for u in users if u and len(u) > 1}, key=len, reverse=True):
        text = re.sub(rf"(?<![{_TOKEN_CHARS}]){re.escape(user)}(?![{_TOKEN_CHARS}])", "<user>", text)
    text = re.sub(r"/(home|Users)/[^/\s\"']+", r"/\1/<user>", text)
    text = re.sub(r"\b(?:\d{1,3}\.){3}\d{1,3}\b", "<ip>", text)
    text = re.sub(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b", "<mac>", text)
    text = re.sub(r"(?i)\b(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}\b", "<ip6>", text)
    return text

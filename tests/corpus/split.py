"""The dev / validation split of every corpus case (machines, NCCL logs, the survey), by a hash of its thread.

A case belongs to `validation` when the SHA-256 of its normalised thread URL, read as a number, is divisible by
3 (about one third), else to `dev`. The split depends on the thread alone, so every case from one thread lands on
the same side and a new case cannot move an old one. Rules are written and tuned on dev cases only; validation is
measured and quoted, never tuned on (tests/corpus/README.md).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Dict, Optional

DEV, VALIDATION = "dev", "validation"


def normalise(url: str) -> str:
    """The thread a URL names: scheme and host lower-cased, no fragment (a comment's anchor), query or trailing
    slash, and GitHub's /pull/N and /issues/N read as one thread."""
    url = url.strip().split("#", 1)[0].split("?", 1)[0].rstrip("/")
    url = re.sub(r"^https?://", "https://", url, flags=re.I)
    head, sep, path = url.partition("://")
    host, _, rest = path.partition("/")
    rest = re.sub(r"^([^/]+/[^/]+)/pull/(\d+)(?:/.*)?$", r"\1/issues/\2", rest)
    rest = re.sub(r"^([^/]+/[^/]+)/issues/(\d+)/.*$", r"\1/issues/\2", rest)
    return f"{head}{sep}{host.lower()}/{rest}"


def split_of_url(url: str) -> str:
    """`validation` for about one URL in three, `dev` for the rest; stable across runs and machines."""
    digest = hashlib.sha256(normalise(url).encode("utf-8")).hexdigest()
    return VALIDATION if int(digest, 16) % 3 == 0 else DEV


def case_url(case: Dict[str, Any]) -> Optional[str]:
    """The thread URL of a corpus case: a machine case's `source` string, or an NCCL case's `source.url`."""
    source = case.get("source") if "source" in case else case.get("url")
    if isinstance(source, dict):
        source = source.get("url")
    return source if isinstance(source, str) and source.strip() else None


def split_of(case: Dict[str, Any]) -> str:
    """The side of a case; a case with no thread URL (a synthetic one) is dev."""
    url = case_url(case)
    return split_of_url(url) if url else DEV

"""Everything envdoctor prints goes through here: secrets never leave the machine, whatever the input held
(a snapshot from another machine, a log, an index URL with credentials)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from envdoctor.redact import scrub_secrets


def emit(text: str, stream: TextIO = sys.stdout) -> None:
    stream.write(scrub_secrets(text))


def emit_json(doc: Any, stream: TextIO = sys.stdout) -> None:
    stream.write(scrub_secrets(json.dumps(doc, indent=2)) + "\n")

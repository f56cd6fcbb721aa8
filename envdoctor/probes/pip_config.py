"""The package index pip is configured with in an interpreter (`envdoctor index update` reads DeepSpeed from it)."""

from __future__ import annotations

import re
import sys
from typing import Optional

from envdoctor.processes import run_command


def pip_index_url(configured: Optional[str], python: str = sys.executable) -> Optional[str]:
    """The index pip uses: `configured` (PIP_INDEX_URL, read at the edge), else `pip config list`; None: pip's
    own default."""
    if configured:
        return configured
    res = run_command([python, "-m", "pip", "config", "list"], timeout=30)
    for line in res.stdout.splitlines() if res.ok else []:
        m = re.match(r"^[\w:.-]*index-url='([^']+)'", line.strip())
        if m and ".extra-index-url" not in line:
            return m.group(1).split()[0]
    return None

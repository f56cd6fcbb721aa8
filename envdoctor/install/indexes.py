"""How pip is told about the torch index: in its argv when the URL is public, through its environment when
the URL carries credentials (argv is visible to every user in `ps`; a process's environment is not)."""

from __future__ import annotations

import urllib.parse
from typing import Dict, Iterable, List, Mapping, Tuple

TORCH_INDEX_ENV = "ENVDOCTOR_TORCH_INDEX"  # names the PyTorch index, or a mirror of it, to install from


def has_credentials(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return bool(parts.username or parts.password)


def index_options(urls: Iterable[str], environ: Mapping[str, str]) -> Tuple[List[str], Dict[str, str]]:
    """(pip arguments, pip environment variables) that add these indexes to the user's own pip configuration."""
    argv: List[str] = []
    secret: List[str] = []
    for url in dict.fromkeys(u for u in urls if u):
        if has_credentials(url):
            secret.append(url)
        else:
            argv += ["--extra-index-url", url]
    env: Dict[str, str] = {}
    if secret:
        env["PIP_EXTRA_INDEX_URL"] = " ".join([environ.get("PIP_EXTRA_INDEX_URL", "").strip(), *secret]).strip()
    return argv, env

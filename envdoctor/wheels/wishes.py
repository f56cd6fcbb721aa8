"""What the user asks the planner for (`fix --torch/--deepspeed/--python`, the TUI's Fix tab), as typed values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from envdoctor.errors import InputError


@dataclass
class Wishes:
    torch: Optional[SpecifierSet] = None
    deepspeed: bool = False
    deepspeed_spec: Optional[SpecifierSet] = None
    python: Optional[str] = None  # "3.12": plan for this Python instead of the snapshot's
    index_base: str = "https://download.pytorch.org/whl"

    @classmethod
    def from_options(cls, torch: Optional[str], deepspeed: Optional[str], python: Optional[str],
                     index_base: str) -> Wishes:
        """From option texts: `torch`/`deepspeed` as --torch/--deepspeed take them (deepspeed None: not wanted,
        '' any version); a bad specifier is an InputError naming the option."""
        return cls(torch=parse_spec(torch, "--torch"), deepspeed=deepspeed is not None,
                   deepspeed_spec=parse_spec(deepspeed, "--deepspeed"), python=python, index_base=index_base)


def parse_spec(text: Optional[str], what: str) -> Optional[SpecifierSet]:
    """'2.9' -> ==2.9.*, '2.9.1' -> ==2.9.1, else a PEP 440 specifier; empty -> None."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if re.fullmatch(r"\d+\.\d+", text):
        text = f"=={text}.*"
    elif re.fullmatch(r"\d+\.\d+\.\d+", text):
        text = f"=={text}"
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise InputError(f"{what} {text!r}: not a version specifier (e.g. '2.9' or '>=2.8,<2.11')") from None

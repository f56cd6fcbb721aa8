"""Moved to `envdoctor.evidence.needles` (the one evidence engine); this name is the same module."""

import sys

from envdoctor.evidence import needles as _moved

sys.modules[__name__] = _moved

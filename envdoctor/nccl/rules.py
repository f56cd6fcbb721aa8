"""Moved to `envdoctor.evidence.signatures` (the one evidence engine); this name is the same module."""

import sys

from envdoctor.evidence import signatures as _moved

sys.modules[__name__] = _moved

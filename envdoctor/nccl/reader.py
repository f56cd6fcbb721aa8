"""Moved to `envdoctor.evidence.reader` (the one evidence engine); this name is the same module."""

import sys

from envdoctor.evidence import reader as _moved

sys.modules[__name__] = _moved

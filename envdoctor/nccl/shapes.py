"""Moved to `envdoctor.evidence.shapes` (the one evidence engine); this name is the same module."""

import sys

from envdoctor.evidence import shapes as _moved

sys.modules[__name__] = _moved

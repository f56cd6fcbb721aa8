"""Moved to `envdoctor.evidence.inputs` (the one evidence engine); this name is the same module."""

import sys

from envdoctor.evidence import inputs as _moved

sys.modules[__name__] = _moved

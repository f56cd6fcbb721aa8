"""The Textual app (`envdoctor` in a terminal). Only presenters live here; every decision is the core's."""

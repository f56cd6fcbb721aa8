"""The use cases: check, plan a fix, apply a fix, run self-tests, diagnose a text, fleet.

Each is a function over plain values (a snapshot or an interpreter, the Knowledge, the user's wishes) that
returns a typed result whose `to_json()` is the contract document. The CLI (argparse -> use case -> render)
and the TUI (one worker over the use cases) only call them and render what they return.
"""

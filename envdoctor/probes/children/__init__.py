"""Scripts run inside the *target* interpreter. Standard library only, Python 3.8+.

They are executed by path (`python FILE`), never imported into envdoctor's own process,
and print one JSON object on stdout.
"""

"""Errors that end a command with exit code 2: bad arguments or bad input, said in one line."""


class InputError(Exception):
    """Bad arguments, an unreadable or invalid file, an invalid rules database or index.

    The message names what and where; the CLI prints it on stderr and exits 2.
    """


class SnapshotError(ValueError):
    """A snapshot that cannot be read: the message names the file and the problem."""

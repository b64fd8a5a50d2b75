"""Exceptions shared by the CLI and the modules it calls (kept apart so neither imports the other)."""


class UsageError(Exception):
    """Bad input from the user: the CLI reports it as one line with exit status 2."""


"""Exceptions shared by the CLI and the modules it calls (kept apart so neither imports the other)."""


class UsageError(Exception):
    """Bad input from the user: the CLI reports it as one line with exit status 2."""


class ArgumentError(UsageError, ValueError):
    """A Python API argument of the right type but a wrong value (``jobs=0``): a ValueError to a
    caller of the API, one line with exit status 2 from the CLI. The message names the argument."""


class ArgumentTypeError(UsageError, TypeError):
    """A Python API argument of the wrong type (``seeds="12"``): a TypeError to a caller of the
    API, one line with exit status 2 from the CLI. The message names the argument."""


class RunFolderError(UsageError, ValueError):
    """A run folder (``ccbench run --out``) with a file missing or damaged: the message names
    the file and what is wrong with it."""

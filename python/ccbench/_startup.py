"""The ``ccbench`` command's first moments: a Ctrl-C while it is still importing prints one line.

Until :func:`ccbench.cli.main` runs, a KeyboardInterrupt would surface in the middle of some
import and print its traceback. This module is the first thing the package imports; when this
process is the ``ccbench`` command (the console script, or ``python -m ccbench``), it makes
SIGINT print ``error: interrupted`` and exit with status 130 until :func:`started` hands Ctrl-C
back to ``main``, which reports it the same way. Imported as a library, it changes nothing.
"""

import os
import sys

#: The modules ``python -m`` runs as the command.
COMMAND_MODULES = ("ccbench", "ccbench.__main__", "ccbench.cli")

#: Interpreter options that take the next argument as their value.
_OPTIONS_WITH_VALUE = ("-X", "-W", "-Q")


def _interrupted(signum, frame):  # pragma: no cover - runs only in the command's first moments
    os.write(2, b"error: interrupted\n")
    os._exit(130)


def is_the_command() -> bool:
    """Whether this process was started as the ``ccbench`` command."""
    main = sys.modules.get("__main__")
    if getattr(main, "__name__", "") == "__main__" and \
            os.path.basename(getattr(main, "__file__", None) or "") == "ccbench":
        return True  # the console script (pip's wrapper importing ccbench.cli)
    argv = list(getattr(sys, "orig_argv", ()))  # Python 3.10+
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return i + 1 < len(argv) and argv[i + 1] in COMMAND_MODULES
        if arg.startswith("-m"):
            return arg[2:] in COMMAND_MODULES
        if arg in _OPTIONS_WITH_VALUE:
            i += 2
            continue
        if arg == "-c" or arg == "-" or not arg.startswith("-"):
            return False  # code, stdin or a script: not the command
        i += 1
    return False


def quiet_start() -> None:
    """Make Ctrl-C print one line while the command imports (only in the command)."""
    try:
        if is_the_command():
            import signal

            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _interrupted)
    except (ValueError, OSError):  # not the main thread, or no signals here
        pass


def started() -> None:
    """From here on Ctrl-C raises KeyboardInterrupt again (``main`` reports it in one line)."""
    import signal

    try:
        if signal.getsignal(signal.SIGINT) is _interrupted:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread
        pass


quiet_start()

"""Progress of a campaign: a tqdm bar (runs done / total, rate, ETA, failures) in a terminal or a
Jupyter notebook, one plain line per run when output goes to a file or a pipe."""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO, Union

from ccbench.campaign.tasks import Outcome

#: What callers pass as ``progress``: ``True`` (bar or lines, whichever suits stdout), ``False``
#: or ``None`` (silent), or a callable that receives each plain line.
ProgressArg = Union[bool, None, Callable[[str], None]]


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    try:
        return bool(shell) and shell.get_ipython().__class__.__name__ == "ZMQInteractiveShell"
    except AttributeError:
        return False


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def describe(outcome: Outcome) -> str:
    """A run's outcome in a few words: its first metrics, ``cached``, or ``failed: <error>``."""
    if outcome.error:
        return f"failed: {outcome.error}"
    items = list((outcome.metrics or {}).items())[:4]
    text = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in items)
    return text + (" (cached)" if outcome.cached else "")


class Progress:
    """Counts runs as they finish. ``mode`` is ``"bar"``, ``"lines"`` or ``"off"``."""

    def __init__(self, total: int, desc: str = "runs", progress: ProgressArg = True,
                 stream: Optional[TextIO] = None):
        self.total, self.done, self.failed, self.cached = total, 0, 0, 0
        self.start = time.monotonic()
        self.stream = stream or sys.stdout
        self.print = progress if callable(progress) else None
        self.bar = None
        if progress is True and (_in_notebook() or getattr(self.stream, "isatty", lambda: False)()):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="run", file=self.stream, dynamic_ncols=True)
        self.mode = "bar" if self.bar else ("lines" if progress else "off")

    def _eta(self) -> str:
        computed = self.done - self.cached
        left = self.total - self.done
        if computed <= 0 or left <= 0:
            return ""
        return f", ETA {_duration((time.monotonic() - self.start) / computed * left)}"

    def advance(self, label: str, outcome: Outcome) -> None:
        self.done += 1
        self.failed += bool(outcome.error)
        self.cached += outcome.cached
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, cached=self.cached, refresh=False)
            self.bar.update(1)
        elif self.mode == "lines":
            failed = f", {self.failed} failed" if self.failed else ""
            line = f"[{self.done}/{self.total}{failed}{self._eta()}] {label}: {describe(outcome)}"
            if self.print is not None:
                self.print(line)
            else:
                print(line, file=self.stream, flush=True)

    def from_cache(self, count: int) -> None:
        """``count`` runs found in the cache: counted at once, one line for all."""
        if count <= 0:
            return
        self.done += count
        self.cached += count
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, cached=self.cached, refresh=False)
            self.bar.update(count)
        elif self.mode == "lines":
            line = f"[{self.done}/{self.total}] {count} run(s) from the cache"
            (self.print or (lambda text: print(text, file=self.stream, flush=True)))(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

"""Python values written as TOML literals, the form overrides take (``duration="20s"``): the
values of a sweep's grid and of a mapping of ``overrides`` alike. Only formatting: the core parses."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}
#: What a TOML basic string cannot hold raw: quote, backslash, control characters and DEL.
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')


def _escape(match: "re.Match[str]") -> str:
    c = match.group()
    return _ESCAPES.get(c) or f"\\u{ord(c):04x}"


def _toml_string(text: str) -> str:
    # A campaign formats one per grid key and run (150 000 runs in ABE Figs. 16-18), so the
    # common case, nothing to escape, is a single regex scan.
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal: ``"0.5bdp"`` (quoted), ``0.7``, ``true``, ``[1, 2]``, ``{a = 1}``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no override form (the core reads inf/nan as text)")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_string(str(k))} = {toml_literal(v)}"
                               for k, v in value.items()) + "}"
    raise TypeError(f"cannot write a {type(value).__name__} as a TOML value")

"""``ccbench list``: what the core can build (controllers, receivers, queues, topologies, and the
TCP stack's options, from ``_core.registry()``) and the experiments of the Python registry, as
plain text."""

from __future__ import annotations

from typing import List, Optional

CORE_FAMILIES = ("controllers", "receivers", "queues", "topologies", "stack")
FAMILIES = CORE_FAMILIES + ("experiments",)


def _core_entries(family: str) -> List[dict]:
    from ccbench import api

    return list(api.registry().get(family, []))


def _experiment_entries() -> List[dict]:
    from ccbench.experiments.registry import experiments

    return [{"name": e.name, "summary": e.description} for e in experiments().values()]


def entries(family: str) -> List[dict]:
    """The entries of one family (``name`` plus optional ``aliases``, ``summary``, ``params``,
    and for controllers ``quic``: how each runs on QUIC)."""
    return _experiment_entries() if family == "experiments" else _core_entries(family)


def format_entry(entry: dict) -> List[str]:
    aliases = entry.get("aliases") or []
    head = entry["name"] + (f" ({', '.join(aliases)})" if aliases else "")
    summary = entry.get("summary") or ""
    lines = [f"  {head:<20} {summary}".rstrip()]
    if entry.get("quic"):
        lines.append(f"      on QUIC: {entry['quic']}")
    for p in entry.get("params") or []:
        default = f" = {p['default']}" if p.get("default") not in (None, "") else ""
        lines.append(f"      {p['key']}: {p.get('type', '?')}{default}")
    return lines


def format_family(family: str) -> str:
    lines = [f"{family}:"]
    for entry in entries(family):
        lines.extend(format_entry(entry))
    if len(lines) == 1:
        lines.append("  (none yet)")
    return "\n".join(lines)


def listing(family: Optional[str] = None) -> str:
    """One family, or all of them."""
    names = FAMILIES if family is None else (family,)
    return "\n\n".join(format_family(name) for name in names)

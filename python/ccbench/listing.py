"""``ccbench list``: what the core can build (controllers, receivers, queues, topologies, from
``_core.registry()``) and the experiments of the Python registry, as plain text."""

from __future__ import annotations

from typing import List, Optional

from ccbench.errors import CoreFeatureMissing

CORE_FAMILIES = ("controllers", "receivers", "queues", "topologies")
FAMILIES = CORE_FAMILIES + ("experiments",)


def _core_entries(family: str) -> List[dict]:
    from ccbench import api

    try:
        return list(api.registry().get(family, []))
    except CoreFeatureMissing:
        if family != "controllers":
            raise
        # A core built before registry() still names its controllers.
        return [{"name": name} for name in api.controllers()]


def _experiment_entries() -> List[dict]:
    from ccbench.experiments.registry import experiments

    return [{"name": e.name, "summary": e.description} for e in experiments().values()]


def entries(family: str) -> List[dict]:
    """The entries of one family (``name`` plus optional ``aliases``, ``summary``, ``params``)."""
    return _experiment_entries() if family == "experiments" else _core_entries(family)


def format_entry(entry: dict) -> List[str]:
    aliases = entry.get("aliases") or []
    head = entry["name"] + (f" ({', '.join(aliases)})" if aliases else "")
    summary = entry.get("summary") or ""
    lines = [f"  {head:<20} {summary}".rstrip()]
    for p in entry.get("params") or []:
        default = f" = {p['default']}" if p.get("default") not in (None, "") else ""
        lines.append(f"      {p['key']}: {p.get('type', '?')}{default}")
    return lines


def format_family(family: str) -> str:
    lines = [f"{family}:"]
    for entry in entries(family):
        lines.extend(format_entry(entry))
    return "\n".join(lines)


def listing(family: Optional[str] = None) -> str:
    """One family, or all of them; without a core registry the core families it lacks say so."""
    if family is not None:
        return format_family(family)
    parts = []
    for name in FAMILIES:
        try:
            parts.append(format_family(name))
        except CoreFeatureMissing as exc:
            parts.append(f"{name}: not listed ({exc})")
    return "\n\n".join(parts)

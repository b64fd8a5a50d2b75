"""Builders of scenario dicts for common topologies, in the general ``[[links]]`` form.

They only arrange names and pass values through: units and every check stay in the core, so a
bad value is reported by :func:`ccbench.run` / :func:`ccbench.validate` naming its field.

>>> import ccbench
>>> from ccbench.topology import parking_lot
>>> r = ccbench.run(parking_lot(hops=3, duration="30s"))
>>> r.link_summary.set_index("name").loc[["l1", "l2", "l3"], "utilization"]
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def parking_lot(hops: int = 3, *, rate: str = "10Mbps", delay: str = "10ms", buffer: str = "100p",
                aqm: str = "droptail", cca: str = "cubic", cross_cca: Optional[str] = None,
                duration: str = "60s", warmup: str = "0s", seed: int = 1,
                link: Optional[Dict[str, Any]] = None, flow: Optional[Dict[str, Any]] = None) -> dict:
    """A chain of ``hops`` links ``l1 … lN`` over nodes ``n0 … nN``; flow ``long`` crosses them
    all and flow ``cross<i>`` crosses link ``l<i>`` only.

    ``link`` adds keys to every link (``{"ecn": True}``), ``flow`` to every flow
    (``{"delayed_ack": False}``); ``cross_cca`` defaults to ``cca``.
    """
    if not isinstance(hops, int) or isinstance(hops, bool) or hops < 1:
        raise ValueError(f"parking_lot: hops must be a positive integer, got {hops!r}")
    nodes = [f"n{i}" for i in range(hops + 1)]
    links: List[dict] = [
        {"name": f"l{i}", "from": nodes[i - 1], "to": nodes[i], "rate": rate, "delay": delay,
         "buffer": buffer, "aqm": aqm, **(link or {})}
        for i in range(1, hops + 1)
    ]
    flows = [{"name": "long", "cca": cca, "from": nodes[0], "to": nodes[-1], **(flow or {})}]
    flows += [{"name": f"cross{i}", "cca": cross_cca or cca, "from": nodes[i - 1], "to": nodes[i],
               **(flow or {})} for i in range(1, hops + 1)]
    return {"duration": duration, "warmup": warmup, "seed": seed, "links": links, "flows": flows}

"""No module cycles in the Rust crates: within each crate, the modules that name each other
through `crate::` or `super::` paths (outside comments and test modules) form no cycle, so each
module can be read after the ones it uses. A module's own submodules are part of it."""

import re
from collections import defaultdict
from pathlib import Path

CRATES = Path(__file__).resolve().parents[2] / "crates"
PATH = re.compile(r"\b(?:crate|super)(?:::[a-z_][a-z0-9_]*)+")


def _modules(src: Path) -> dict:
    """Module path (``net::link``) → its code, without comments and ``#[cfg(test)]`` parts."""
    modules = {}
    for file in src.rglob("*.rs"):
        parts = list(file.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib", "main"):
            parts = parts[:-1]
        if parts and (parts[-1].endswith("_tests") or parts[-1] == "tests"):
            continue
        code = file.read_text().split("#[cfg(test)]")[0]
        modules["::".join(parts)] = "\n".join(line.split("//")[0] for line in code.splitlines())
    return modules


def _edges(modules: dict) -> dict:
    edges = defaultdict(set)
    for name, code in modules.items():
        here = name.split("::") if name else []
        for ref in PATH.findall(code):
            parts = ref.split("::")
            if parts[0] == "crate":
                path = parts[1:]
            else:
                path = here[:-1]
                for part in parts[1:]:
                    if part == "super":
                        path = path[:-1]
                    else:
                        path.append(part)
            for k in range(len(path), 0, -1):
                target = "::".join(path[:k])
                if target in modules:
                    related = target == name or name.startswith(target + "::") or target.startswith(name + "::")
                    if not related:
                        edges[name].add(target)
                    break
    return edges


def _cycles(edges: dict, nodes) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def test_no_crate_has_a_module_cycle():
    cycles = {}
    for crate in sorted(p for p in CRATES.iterdir() if (p / "src").is_dir()):
        modules = _modules(crate / "src")
        found = _cycles(_edges(modules), sorted(modules))
        if found:
            cycles[crate.name] = found
    assert not cycles, f"module cycles: {cycles}"


def test_the_check_finds_a_cycle():
    modules = {"": "", "a": "use crate::b::X;", "b": "use super::a::Y;", "c": "use crate::a::Z;"}
    assert _cycles(_edges(modules), sorted(modules)) == [["a", "b"]]

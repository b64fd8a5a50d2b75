"""Import hygiene: a CLI call pays for no heavy library it does not use, and no module imports
itself back through another (every module imports cleanly on its own, in a fresh interpreter)."""

import ast
import json
from pathlib import Path

import pytest
from conftest import python_code as _python

import ccbench

HEAVY = ("pandas", "pyarrow", "matplotlib", "numpy")
PACKAGE_DIR = Path(ccbench.__file__).resolve().parent
PYTHON_DIR = PACKAGE_DIR.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PYTHON_DIR).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(_module_name(p) for p in PACKAGE_DIR.rglob("*.py") if p.name != "__main__.py")


def _heavy_after(statement: str, *args: str, cwd=None) -> list:
    """The heavy modules loaded once ``statement`` ran in a fresh interpreter."""
    code = (f"import sys\n{statement}\n"
            f"print('HEAVY=' + repr(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    proc = _python(code, *args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    line = [l for l in proc.stdout.splitlines() if l.startswith("HEAVY=")][-1]
    return eval(line[len("HEAVY="):])


def _cli(argv: list) -> str:
    return ("from ccbench.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass")


def test_import_ccbench_loads_no_heavy_module():
    assert _heavy_after("import ccbench, ccbench.api, ccbench.cli") == []


def test_every_module_imports_without_heavy_modules():
    statement = "\n".join(f"import {m}" for m in MODULES)
    assert _heavy_after(statement) == []


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["list", "experiments"],
                                  ["experiment", "--list"]])
def test_cli_without_work_loads_no_heavy_module(argv):
    assert _heavy_after(_cli(argv)) == []


def test_run_with_out_loads_no_heavy_module(scenario_file, tmp_path):
    out = tmp_path / "run"
    assert _heavy_after(_cli(["run", str(scenario_file), "--out", str(out)])) == []
    assert json.loads((out / "summary.json").read_text())["flows"][0]["name"] == "a"
    assert {p.name for p in out.glob("*.parquet")} == {f"{n}.parquet" for n in ccbench.result.SERIES}


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone(module):
    proc = _python(f"import {module}")
    assert proc.returncode == 0, proc.stderr


SUBMODULES = set(MODULES) | {"ccbench._core"}


def _imports(module: str) -> set:
    """ccbench modules ``module`` imports, at the top or inside a function: a cycle through a
    lazy import is still a cycle, it only fails later."""
    path = PYTHON_DIR.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import mod` imports pkg.mod when that is a module (or the extension).
            found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in SUBMODULES
                         else node.module for a in node.names)
    return {m for m in found if m in MODULES and m != module}


def test_no_import_cycles():
    graph = {m: _imports(m) for m in MODULES}
    state = {}

    def visit(module, stack):
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                cycle = stack[stack.index(dep):] + [dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, stack + [dep])
        state[module] = "done"

    for module in MODULES:
        if module not in state:
            visit(module, [module])
    assert graph["ccbench.experiments.registry"] == {"ccbench.experiments.base"}

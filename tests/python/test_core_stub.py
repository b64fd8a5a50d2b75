"""The type stub of the Rust extension (python/ccbench/_core.pyi) matches the built module: the
same public names, and each function's parameters in order with the same defaults (PyO3 gives
every function a text signature), so the stub cannot drift from crates/py."""

import ast
import inspect
from pathlib import Path

from ccbench import _core

STUB = Path(__file__).resolve().parents[2] / "python" / "ccbench" / "_core.pyi"


def _stub():
    tree = ast.parse(STUB.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return functions, classes


def _default(node):
    """A stub default as the built signature shows it (PyO3 shows ``Vec::new()`` as ``...``,
    which the stub writes too)."""
    return ast.literal_eval(node)


def test_the_stub_names_every_public_name_of_the_module():
    functions, classes = _stub()
    built = {n for n in dir(_core) if not n.startswith("_")}
    assert set(functions) | classes == built


def test_each_function_has_the_built_parameters_and_defaults():
    functions, _ = _stub()
    for name, node in functions.items():
        built = inspect.signature(getattr(_core, name)).parameters
        args = node.args.args
        assert [a.arg for a in args] == list(built), name
        defaults = dict(zip([a.arg for a in args][len(args) - len(node.args.defaults):], node.args.defaults))
        for arg, parameter in built.items():
            if parameter.default is inspect.Parameter.empty:
                assert arg not in defaults, (name, arg)
            else:
                assert _default(defaults[arg]) == parameter.default, (name, arg)


def test_the_classes_have_their_methods():
    tree = ast.parse(STUB.read_text())
    for node in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for method in (m.name for m in node.body if isinstance(m, ast.FunctionDef)):
            assert hasattr(getattr(_core, node.name), method), (node.name, method)

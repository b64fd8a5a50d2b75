"""A metric's key in the run cache: its code and everything that code reads, by content, so that
a cached value never depends on anything outside its key (issue 38). Two lambdas over a loop
variable, a metric whose global or closure changed, a helper in the user's module edited: each is
a different key. A metric that reads something that cannot be keyed faithfully (a lock, an open
file, a generator) raises :class:`UncacheableMetric`; :func:`cacheable_identity` then notes it
once and the runner computes its runs without caching them.
"""

from __future__ import annotations

import copyreg
import dis
import functools
import hashlib
import itertools
import os
import site
import sys
import sysconfig
import types
import warnings
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple


def package_root() -> Path:
    """The folder of the ccbench package this process runs (this file is ``campaign/metric_key.py``)."""
    return Path(__file__).resolve().parents[1]


def _file_digest(path: str) -> str:
    """SHA-256 of a file's bytes, computed again when the file changes (size, time or inode)."""
    found = os.stat(path)
    return _file_digest_of(path, found.st_size, found.st_mtime_ns, found.st_ino)


@lru_cache(maxsize=4096)
def _file_digest_of(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class UncacheableMetric(Exception):
    """A metric reads something whose value cannot be keyed faithfully; its runs are not cached."""

    def __init__(self, metric: str, what: str, where: str = ""):
        self.metric, self.what, self.where = metric, what, where
        via = f" (through {where})" if where else ""
        super().__init__(f"metric {metric} reads {what}{via}, which cannot be keyed")


class _Unkeyable(Exception):
    def __init__(self, what: str, where: str):
        super().__init__(what)
        self.what, self.where = what, where


#: Deepest nesting of objects followed, and most objects visited, when keying a metric.
KEY_DEPTH = 100
KEY_NODES = 1_000_000

#: Class attributes that are not part of a class's behaviour (or that the runtime fills in
#: lazily: keying them would make a class's key change the second time it is keyed).
_CLASS_SKIP = frozenset({"__dict__", "__weakref__", "__slotnames__", "_abc_impl", "__abstractmethods__",
                         "__parameters__", "__orig_bases__"})

_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})

_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType,
                types.MethodDescriptorType, types.ClassMethodDescriptorType)


@lru_cache(maxsize=None)
def _library_roots() -> Tuple[str, ...]:
    """Folders whose code is a library's: the standard library, site-packages, and ccbench
    itself (whose every source is in the key already). Their functions and classes are keyed by
    name and file digest; code anywhere else (a script, a notebook, a test, a user's module) is
    followed into everything it reads."""
    roots = {str(package_root())}
    paths = sysconfig.get_paths()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(name):
            roots.add(paths[name])
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    return tuple(sorted({os.path.realpath(r).rstrip(os.sep) + os.sep for r in roots if r}))


@lru_cache(maxsize=4096)
def _is_library_file(path: str) -> bool:
    if path.startswith("<frozen "):
        return True
    if not path or path.startswith("<") or not os.path.isabs(path):
        return False
    real = os.path.realpath(path)
    return any(real.startswith(root) for root in _library_roots())


def _is_library_module(name: str) -> bool:
    if name in sys.builtin_module_names or name == "builtins":
        return True
    module = sys.modules.get(name)
    if module is None:
        return False
    path = getattr(module, "__file__", None)
    if isinstance(path, str):
        return _is_library_file(path)
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    return origin in ("built-in", "frozen")


@lru_cache(maxsize=4096)
def _global_names(code: types.CodeType) -> Tuple[str, ...]:
    """The global names ``code`` (and the code nested in it) loads."""
    names = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in _GLOBAL_OPS and isinstance(instruction.argval, str):
            names.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(_global_names(const))
    return tuple(sorted(names))


def _describe(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", kind.__name__)
    return f"<{name if module == 'builtins' else f'{module}.{name}'} object>"


def _atom(value: Any) -> Optional[bytes]:
    """The canonical bytes of a plain scalar (exact types only), else None."""
    kind = type(value)
    if value is None or value is Ellipsis or value is NotImplemented:
        payload, tag = repr(value).encode(), b"c"
    elif kind is bool:
        payload, tag = (b"1" if value else b"0"), b"b"
    elif kind is int:
        payload, tag = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True), b"i"
    elif kind is float or kind is complex:
        payload, tag = repr(value).encode(), b"f"
    elif kind is str:
        payload, tag = value.encode("utf-8", "surrogatepass"), b"s"
    elif kind is bytes or kind is bytearray:
        payload, tag = bytes(value), b"y"
    else:
        return None
    return tag + len(payload).to_bytes(8, "little") + payload


class _Keyer:
    """A SHA-256 of an object graph in a canonical, address-free form: plain data by value,
    code by its byte code and constants, functions by their code, defaults, closure and the
    globals they load, objects by their class and the state they pickle to. Shared objects are
    digested once; a cycle is written as its distance up the path. Anything that cannot be
    written faithfully raises :class:`_Unkeyable`."""

    def __init__(self) -> None:
        self.memo: Dict[int, bytes] = {}
        self.keep: List[Any] = []  # keeps every memoised object alive, so no id is reused
        self.active: Dict[int, int] = {}
        self.path: List[str] = []
        self.nodes = 0

    def fail(self, what: str) -> _Unkeyable:
        return _Unkeyable(what, ".".join(p for p in self.path if p))

    def digest(self, value: Any, label: str = "") -> bytes:
        atom = _atom(value)
        if atom is not None:
            return hashlib.sha256(atom).digest()
        self.path.append(label)
        try:
            return self._composite(value)
        finally:
            self.path.pop()

    def _feed(self, hasher, value: Any, label: str = "") -> None:
        atom = _atom(value)
        hasher.update(atom if atom is not None else b"d" + self.digest(value, label))

    def _composite(self, value: Any) -> bytes:
        key = id(value)
        found = self.memo.get(key)
        if found is not None:
            return found
        if key in self.active:
            up = len(self.active) - self.active[key]
            return hashlib.sha256(b"cycle" + up.to_bytes(8, "little")).digest()
        self.nodes += 1
        if self.nodes > KEY_NODES:
            raise self.fail(f"more than {KEY_NODES} objects")
        if len(self.active) >= KEY_DEPTH:
            raise self.fail(f"objects nested more than {KEY_DEPTH} deep, such as {_describe(value)}")
        self.active[key] = len(self.active)
        self.keep.append(value)
        try:
            hasher = hashlib.sha256()
            self._write(hasher, value)
            digest = hasher.digest()
        finally:
            del self.active[key]
        self.memo[key] = digest
        return digest

    def _write(self, h, value: Any) -> None:
        kind = type(value)
        numpy = sys.modules.get("numpy")
        if numpy is not None and (kind is numpy.ndarray or isinstance(value, numpy.generic)):
            self._numpy(h, numpy, value)
        elif kind is list or kind is tuple:
            h.update(b"list" if kind is list else b"tuple")
            h.update(len(value).to_bytes(8, "little"))
            for i, item in enumerate(value):
                self._feed(h, item, f"[{i}]")
        elif kind is dict or kind is types.MappingProxyType:
            h.update(b"dict")
            items = list(value.items())
            if kind is types.MappingProxyType:
                items.sort(key=lambda kv: (str(type(kv[0])), str(kv[0])))
            self._pairs(h, items)
        elif kind is set or kind is frozenset:
            h.update(b"set" if kind is set else b"frozenset")
            for digest in sorted(self.digest(item) for item in value):
                h.update(digest)
        elif isinstance(value, types.ModuleType):
            self._module(h, value)
        elif isinstance(value, types.FunctionType):
            self._function(h, value)
        elif isinstance(value, types.CodeType):
            self._code(h, value)
        elif isinstance(value, type):
            self._class(h, value)
        elif isinstance(value, types.MethodType):
            h.update(b"method")
            self._feed(h, value.__func__)
            self._feed(h, value.__self__, "__self__")
        elif isinstance(value, types.BuiltinFunctionType):
            owner = getattr(value, "__self__", None)
            h.update(b"builtin" + str(getattr(value, "__qualname__", value.__name__)).encode() + b"\0")
            if owner is None or isinstance(owner, types.ModuleType):
                h.update(str(getattr(value, "__module__", None) or getattr(owner, "__name__", "")).encode())
            else:
                self._feed(h, owner, "__self__")
        elif isinstance(value, functools.partial):
            h.update(b"partial")
            self._feed(h, type(value))
            self._feed(h, value.func, "func")
            self._feed(h, value.args, "args")
            self._feed(h, value.keywords, "keywords")
            self._feed(h, getattr(value, "__dict__", None) or None)
        elif kind is staticmethod or kind is classmethod:
            h.update(kind.__name__.encode())
            self._feed(h, value.__func__)
        elif kind is property:
            h.update(b"property")
            for part in (value.fget, value.fset, value.fdel):
                self._feed(h, part)
        elif kind is functools.cached_property:
            h.update(b"cached_property")
            self._feed(h, value.func)
        elif isinstance(value, _DESCRIPTORS):
            h.update(b"descriptor" + kind.__name__.encode() + b"\0" + str(value.__name__).encode())
            self._feed(h, getattr(value, "__objclass__", None))
        elif isinstance(value, types.MethodWrapperType):
            h.update(b"method-wrapper" + str(value.__name__).encode())
            self._feed(h, value.__self__, "__self__")
        else:
            self._reduced(h, value)

    def _pairs(self, h, items) -> None:
        h.update(len(items).to_bytes(8, "little"))
        for name, item in items:
            self._feed(h, name)
            self._feed(h, item, name if isinstance(name, str) else "")

    def _numpy(self, h, numpy, value) -> None:
        if value.dtype.hasobject:
            h.update(b"ndarray-object" + repr(value.shape).encode())
            for i, item in enumerate(numpy.asarray(value, dtype=object).ravel().tolist()):
                self._feed(h, item, f"[{i}]")
            return
        h.update(b"ndarray" if isinstance(value, numpy.ndarray) else b"npscalar")
        h.update(str(value.dtype.descr).encode() + repr(numpy.shape(value)).encode())
        h.update(numpy.ascontiguousarray(value).tobytes())

    def _module(self, h, module: types.ModuleType) -> None:
        name = module.__name__
        h.update(b"module" + str(name).encode() + b"\0")
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isfile(path):
            h.update(_file_digest(path).encode())
            return
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if name in sys.builtin_module_names or origin in ("built-in", "frozen") or hasattr(module, "__path__"):
            return
        raise self.fail(f"module {name} (no file to key it by)")

    def _function(self, h, fn: types.FunctionType) -> None:
        code = fn.__code__
        qualname = str(getattr(fn, "__qualname__", fn.__name__))
        h.update(b"function" + str(fn.__module__).encode() + b"\0" + qualname.encode() + b"\0")
        library = _is_library_file(code.co_filename)
        if library:
            # Its source is in a file this key covers by digest; what a factory gave it at run
            # time (closure, defaults of a function made in a call) is not.
            path = code.co_filename
            h.update(_file_digest(path).encode() if os.path.isfile(path) else path.encode())
            if "<locals>" not in qualname and fn.__closure__ is None:
                return
        else:
            self._feed(h, code)
            h.update(b"globals")
            scope = fn.__globals__
            builtins = scope.get("__builtins__", {})
            builtins = builtins if isinstance(builtins, dict) else getattr(builtins, "__dict__", {})
            for name in _global_names(code):
                h.update(name.encode() + b"\0")
                if name in scope:
                    self._feed(h, scope[name], name)
                elif name in builtins:
                    self._feed(h, builtins[name], name)
                else:
                    h.update(b"unbound")
            if fn.__dict__:
                self._feed(h, fn.__dict__)
        h.update(b"defaults")
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        defaults = fn.__defaults__ or ()
        for name, default in zip(names[code.co_argcount - len(defaults):], defaults):
            self._feed(h, default, name)
        self._feed(h, fn.__kwdefaults__)
        h.update(b"closure")
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            h.update(name.encode() + b"\0")
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not yet filled in
                h.update(b"empty")
                continue
            self._feed(h, contents, name)

    def _code(self, h, code: types.CodeType) -> None:
        h.update(b"code")
        for number in (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags):
            h.update(number.to_bytes(8, "little"))
        self._feed(h, code.co_code)
        self._feed(h, getattr(code, "co_exceptiontable", b""))
        for names in (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars):
            self._feed(h, names)
        self._feed(h, code.co_name)
        h.update(b"consts")
        self._feed(h, code.co_consts)

    def _class(self, h, cls: type) -> None:
        module, qualname = str(cls.__module__), str(cls.__qualname__)
        h.update(b"class" + module.encode() + b"\0" + qualname.encode() + b"\0")
        if _is_library_module(module):
            path = getattr(sys.modules.get(module), "__file__", None)
            if isinstance(path, str) and os.path.isfile(path):
                h.update(_file_digest(path).encode())
            return
        for base in cls.__bases__:
            self._feed(h, base)
        if type(cls) is not type:
            self._feed(h, type(cls))
        items = [(name, item) for name, item in vars(cls).items() if name not in _CLASS_SKIP]
        self._pairs(h, sorted(items, key=lambda kv: str(kv[0])))

    def _reduced(self, h, value: Any) -> None:
        """Any other object, by what pickle would make of it: its class (or constructor), the
        arguments and the state."""
        reducer = copyreg.dispatch_table.get(type(value))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reduced = reducer(value) if reducer is not None else value.__reduce_ex__(4)
        except Exception:  # noqa: BLE001 - whatever a type says when it cannot be pickled
            raise self.fail(_describe(value)) from None
        if isinstance(reduced, str):  # a global, pickled by its name
            h.update(b"global" + str(getattr(value, "__module__", "")).encode() + b"\0" + reduced.encode())
            wrapped = getattr(value, "__wrapped__", None)
            if callable(wrapped):  # functools.lru_cache and the like, around a function
                self._feed(h, wrapped, "__wrapped__")
            return
        if not isinstance(reduced, tuple) or not 2 <= len(reduced) <= 6:
            raise self.fail(_describe(value))
        parts = list(reduced) + [None] * (6 - len(reduced))
        h.update(b"reduce")
        self._feed(h, parts[0])
        self._feed(h, parts[1])
        self._feed(h, parts[2])
        limit = KEY_NODES + 1
        self._feed(h, None if parts[3] is None else list(itertools.islice(parts[3], limit)))
        self._feed(h, None if parts[4] is None else [tuple(kv) for kv in itertools.islice(parts[4], limit)])
        self._feed(h, parts[5])


def metric_name(metric: Callable) -> str:
    """``module.qualname`` of a metric (its class's for a callable object)."""
    module = getattr(metric, "__module__", None) or getattr(type(metric), "__module__", "?")
    name = getattr(metric, "__qualname__", None) or type(metric).__qualname__
    return f"{module}.{name}"


def metric_identity(metric: Callable) -> str:
    """What identifies a metric: its name and a digest of its code and everything the code
    reads — byte code and constants (nested code too), default arguments, closure cells, the
    globals it loads (functions among them followed the same way, classes by their methods,
    modules by their file's digest, data by value), a ``functools.partial``'s function and
    arguments, a callable object's class and state. Functions and classes of the standard
    library, of installed packages and of ccbench are keyed by their file's digest (ccbench's
    sources are all in the key already). Deterministic across processes.

    Raises :class:`UncacheableMetric` when the metric reads something that cannot be keyed
    faithfully (an object that cannot be pickled, such as a lock, an open file or a generator;
    objects nested too deep): such a metric's runs must not be cached."""
    name = metric_name(metric)
    keyer = _Keyer()
    try:
        digest = keyer.digest(metric)
    except _Unkeyable as exc:
        raise UncacheableMetric(name, exc.what, exc.where) from None
    except RecursionError:
        raise UncacheableMetric(name, "objects nested too deep") from None
    return f"{name}:{digest.hex()}"


#: Metrics already noted as uncacheable in this process (by id, with a weak reference or the
#: metric itself, so that a new object at a reused address is noted again).
_NOTED: Dict[int, Any] = {}


def cacheable_identity(metric: Callable) -> Optional[str]:
    """:func:`metric_identity`, or ``None`` for a metric whose runs cannot be cached — with a
    one-line note on stderr, once per metric."""
    try:
        return metric_identity(metric)
    except UncacheableMetric as exc:
        reason = str(exc)
    except Exception as exc:  # noqa: BLE001 - keying must never stop a campaign
        reason = f"metric {metric_name(metric)} cannot be keyed ({type(exc).__name__}: {exc})"
    noted = _NOTED.get(id(metric))
    if noted is not None and (noted() if isinstance(noted, weakref.ref) else noted) is metric:
        return None
    try:
        _NOTED[id(metric)] = weakref.ref(metric)
    except TypeError:
        _NOTED[id(metric)] = metric
    print(f"note: cache: {' '.join(reason.split())[:400]}; its runs are not cached", file=sys.stderr)
    return None



"""The run cache: every finished run's metrics by the run's key, in Parquet segments.

A key is the SHA-256 of everything a run's numbers depend on: the scenario as the core validated
it (unit-free, defaults filled in, seed applied, in canonical JSON), the code that runs it (the
core's version and compiled library, and every Python source of the ccbench package, so editing
a helper module, a shared constant or ``result.py`` recomputes the runs that use it), the engine,
the grid point the metric sees, and the metric (:func:`metric_identity`: its code and everything
that code reads — closures, defaults, the globals it names, the functions and classes those lead
to, the modules it uses by their files' digests). Two campaigns that ask for the same run share
it. A metric that reads something which cannot be keyed faithfully (an open file, a lock, a
generator) is not cached: its runs are computed every time, with a one-line note.

A run is journaled the moment it finishes and folded into Parquet in batches (:class:`Cache`),
so a campaign killed at any moment keeps every finished run and leaves no half-written segment.
Failed runs are not cached: a rerun tries them again; nor are runs whose metrics would not come
back from the cache as they went in (a tuple, a set, an object: one note names the column).

Nothing damaged is ever served: a segment's name carries the SHA-256 of its bytes and every
journal line a checksum of its row, both checked on reading; a damaged segment or line is dropped
with a one-line warning and its runs are computed again.

Several processes may share one cache folder: whatever changes the folder's set of segments
(folding journals, merging segments, dropping damaged ones) happens under an exclusive lock on
``<cache>/lock``, reads what it folds under that lock, and removes only files it read there (or
created), checked by device and inode at the moment of removal. Readers take no lock: segments
appear whole, by rename.
"""

from __future__ import annotations

import copyreg
import dis
import errno
import fcntl
import functools
import hashlib
import itertools
import json
import os
import secrets
import site
import stat
import sys
import sysconfig
import time
import types
import warnings
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

#: Folder of the cache under a campaign's output folder, and the default for notebooks.
CACHE_DIR = "cache"

#: The lock file inside a cache folder (held while the set of segments changes).
LOCK_NAME = "lock"

#: Largest segment and journal read; anything bigger is not a cache file (a planted device or a
#: runaway file), and is dropped with a warning like a damaged one.
SEGMENT_LIMIT = 4 << 30
JOURNAL_LIMIT = 1 << 30


def default_cache_dir() -> Path:
    """``$CCBENCH_CACHE``, else ``~/.cache/ccbench`` (for :func:`ccbench.sweep`)."""
    env = os.environ.get("CCBENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccbench"


def _file_digest(path: str) -> str:
    """SHA-256 of a file's bytes, computed again when the file changes (size, time or inode)."""
    found = os.stat(path)
    return _file_digest_of(path, found.st_size, found.st_mtime_ns, found.st_ino)


@lru_cache(maxsize=4096)
def _file_digest_of(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ----- the metric's identity -------------------------------------------------------------------

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


def _plain(value: Any) -> Any:
    """JSON-able form of a grid point value (tuples as lists, other objects by repr)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_key(scenario: Any, core_version: str, engine: str, point: Mapping[str, Any],
            metric_id: str) -> str:
    """The cache key of one run (hex SHA-256); ``scenario`` is the validated scenario, or its
    digest."""
    document = {"scenario": scenario, "core": core_version, "engine": engine,
                "point": _plain(point), "metric": metric_id}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def real_stack_fingerprint() -> str:
    """The programs a real-stack run (``engine = "emu"``) executes, by content: ``ccbench-emu``
    and, as it finds them, ``rledbatd`` (``$CCBENCH_RLEDBATD``, else beside it) and
    ``ccbench-quic`` beside it. A rebuilt emulator or daemon recomputes those runs."""
    from ccbench.emu import binary
    from ccbench.errors import UsageError

    try:
        emu = Path(binary())
    except UsageError:
        return "no-emulator"
    programs = [emu, Path(os.environ.get("CCBENCH_RLEDBATD") or emu.with_name("rledbatd")),
                emu.with_name("ccbench-quic")]
    return "+".join(f"{p.name}:{_file_digest(str(p))[:16]}" for p in programs if p.is_file())


def core_fingerprint() -> str:
    """The code a run executes: the core's version and a digest of its compiled library (the
    version number alone moves only at releases), and a digest of the ccbench package's Python
    sources (:func:`package_fingerprint`)."""
    return _core_fingerprint()


@lru_cache(maxsize=None)
def _core_fingerprint() -> str:
    from ccbench import _core

    path = getattr(_core, "__file__", None)
    digest = _file_digest(path)[:16] if path and os.path.isfile(path) else "unknown"
    return f"{_core.version()}+{digest}+py{package_fingerprint()[:16]}"


def package_root() -> Path:
    """The folder of the ccbench package this process runs (this file is ``campaign/cache.py``)."""
    return Path(__file__).resolve().parents[1]


def package_fingerprint(root: Optional[Path] = None) -> str:
    """SHA-256 over every ``.py`` file of the package (its path inside the package and its
    bytes, in path order). A metric reaches helpers in other modules (``siad/cbr.py`` calls
    ``single_flow_traces``; ``rledbat/solo.py`` reads a constant of ``rledbat/common.py``) and
    every run goes through ``api.py`` and ``result.py``: hashing them all is the one key that
    cannot miss one. (Computed once a process, by :func:`core_fingerprint`.)"""
    root = package_root() if root is None else Path(root)
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


# ----- values that come back as they went in --------------------------------------------------

class _Refused(Exception):
    def __init__(self, column: str, what: str):
        super().__init__(what)
        self.column, self.what = column, what


def _storable(value: Any, column: str) -> Any:
    """``value`` in the form JSON gives back unchanged (numpy scalars as the equal Python
    scalar); :class:`_Refused` when there is none (a tuple comes back a list, a set or an
    object not at all)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        return [_storable(item, column) for item in value]
    if kind is dict:
        for name in value:
            if type(name) is not str:
                raise _Refused(column, f"dict with a {type(name).__name__} key")
        return {name: _storable(item, column) for name, item in value.items()}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic) and not isinstance(value, numpy.timedelta64):
        if isinstance(value, numpy.str_):
            return str(value)
        if isinstance(value, (numpy.bool_, numpy.integer, numpy.floating)):
            item = value.item()
            if type(item) in (bool, int, float):
                return item
    raise _Refused(column, kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}")


def _storable_metrics(metrics: Mapping[str, Any]) -> dict:
    plain = {}
    for column, value in metrics.items():
        if type(column) is not str:
            raise _Refused(repr(column)[:60], f"column name of type {type(column).__name__}")
        plain[column] = _storable(value, column)
    return plain


# ----- the folder ----------------------------------------------------------------------------

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def _row_checksum(key: str, metrics: str, seconds: float) -> str:
    """A journal line's checksum: a flipped byte anywhere in the row is caught."""
    return hashlib.sha256(f"{key}\0{metrics}\0{seconds!r}".encode()).hexdigest()[:16]


def _valid_row(key: Any, metrics: Any, seconds: Any) -> bool:
    """A row that can be served: a 64-hex key, metrics that are a JSON object, a finite time."""
    if not (isinstance(key, str) and len(key) == 64 and isinstance(metrics, str)):
        return False
    try:
        int(key, 16)
        parsed = json.loads(metrics)
        seconds = float(seconds)
    except (ValueError, TypeError):
        return False
    return isinstance(parsed, dict) and seconds == seconds and 0 <= seconds < float("inf")


def _warn(message: str) -> None:
    print(f"warning: {' '.join(message.split())}", file=sys.stderr)


def _note(message: str) -> None:
    print(f"note: {' '.join(message.split())}", file=sys.stderr)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

#: A file as it was read: (device, inode). Removal checks the path still names it.
Ident = Tuple[int, int]


def _open_regular(path: Path) -> int:
    """A descriptor of ``path`` for reading: never through a symbolic link, never blocking on a
    FIFO, and only a regular file (``OSError`` otherwise)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _read_fd(fd: int, limit: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB")
    chunks: List[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB")
        chunks.append(chunk)


def _ident(fd: int) -> Ident:
    found = os.fstat(fd)
    return found.st_dev, found.st_ino


def _remove_if_same(path: Path, ident: Optional[Ident]) -> None:
    """Remove ``path`` if it is still the file that was read or created (same device and
    inode); anything else now at that name is left alone."""
    if ident is None:
        return
    try:
        found = os.lstat(path)
    except OSError:
        return
    if (found.st_dev, found.st_ino) == ident and stat.S_ISREG(found.st_mode):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _token() -> str:
    """Unique per writer: the process and 64 random bits."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


class Cache:
    """Finished runs under ``root``, by key: each run's metrics (as JSON text) and its wall time.

    A finished run is appended at once to this writer's journal (``journal-<pid>-<random>.jsonl``,
    one JSON object a line with a checksum of its row, held under an exclusive ``flock`` while
    it is written), so a kill loses nothing that finished; every :data:`SEGMENT_ROWS` runs, and
    when the campaign ends, the journal is folded into a Parquet segment
    (``seg-<time>-<pid>-<sha256>.parquet``: ``key``, ``metrics``, ``seconds``; the name carries
    the digest of the file's bytes), written under a unique temporary name and renamed.
    Journals of writers that are gone (no lock on them, or a dead pid in the name) are read like
    segments and folded into the next one; a torn last line is skipped. A segment whose bytes do
    not match its digest, or a journal line that does not match its checksum or is not a valid
    row, is dropped with a one-line warning: its runs are computed again, and the damage does
    not come back on the next rerun.

    Folding and merging happen under the folder's lock (``<root>/lock``): the segments are
    listed again there, and a merge reads each segment it merges there, so another process's
    runs are never unlinked unread. Only files this process read under the lock, or created,
    are removed.
    """

    SEGMENT_ROWS = 5000
    #: Segments merged into one when there are more than this many.
    MAX_SEGMENTS = 32

    def __init__(self, root):
        self.root = Path(root)
        self._index: Optional[dict] = None
        self._pending: list = []
        self._journal = None
        self._journal_path: Optional[Path] = None
        self._journal_ident: Optional[Ident] = None
        self._stale_seen = False
        self._warned: set = set()
        self._refused: set = set()

    # -- reading ------------------------------------------------------------------------------

    def _load(self) -> dict:
        if self._index is not None:
            return self._index
        index: dict = {}
        if self.root.is_dir():
            damaged: List[Tuple[Path, Ident]] = []
            seen: set = set()
            for _ in range(5):  # again while segments vanish under us (merged meanwhile)
                vanished = False
                for segment in sorted(self.root.glob("seg-*.parquet")):
                    if segment.name in seen:
                        continue
                    status, rows, ident = self._read_segment(segment)
                    if status == "gone":
                        vanished = True
                        continue
                    seen.add(segment.name)
                    if rows is None:
                        if ident is not None:
                            damaged.append((segment, ident))
                        continue
                    index.update(rows)
                if not vanished:
                    break
            if damaged:
                self._drop(damaged)
            for journal in sorted(self.root.glob("journal-*.jsonl")):
                stale = self._stale_journal(journal)
                if stale is None:
                    continue
                for key, text, seconds in stale[0]:
                    index[key] = (text, seconds)
                self._stale_seen = True
        self._index = index
        return index

    def _drop(self, damaged: List[Tuple[Path, Ident]]) -> None:
        """Remove damaged segments this process read (so the damage does not come back)."""
        try:
            lock = self._lock()
        except OSError:
            return  # left for a process that can lock; warned again meanwhile
        try:
            for path, ident in damaged:
                _remove_if_same(path, ident)
        finally:
            os.close(lock)

    def _read_segment(self, path: Path) -> Tuple[str, Optional[dict], Optional[Ident]]:
        """``("ok", rows, ident)`` for a segment whose bytes match the digest in its name,
        ``("bad", None, ident)`` when they do not (warned), ``("gone", None, None)`` when it
        vanished before it could be opened."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        expected = path.stem.rsplit("-", 1)[-1]
        try:
            fd = _open_regular(path)
        except FileNotFoundError:
            return "gone", None, None
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return "bad", None, None
        try:
            ident = _ident(fd)
            data = _read_fd(fd, SEGMENT_LIMIT)
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return "bad", None, None
        finally:
            os.close(fd)
        if len(expected) != 64 or hashlib.sha256(data).hexdigest() != expected:
            _warn(f"cache: {path.name} is damaged or was written by an older ccbench (its bytes do not "
                  f"match its checksum); dropped, its runs will be computed again")
            return "bad", None, ident
        try:
            table = pq.read_table(pa.BufferReader(data)).to_pydict()
            rows = list(zip(table["key"], table["metrics"], table["seconds"]))
        except Exception as exc:  # noqa: BLE001 - whatever pyarrow says of a bad file
            _warn(f"cache: {path.name} cannot be read ({type(exc).__name__}); dropped, its runs will be "
                  f"computed again")
            return "bad", None, ident
        # The rows themselves were checked when they were journaled (a bad row is never folded
        # in), and the digest says these are the bytes written then.
        return "ok", {key: (metrics, seconds) for key, metrics, seconds in rows}, ident

    def _stale_journal(self, path: Path) -> Optional[Tuple[list, Ident]]:
        """The good rows of a journal no live writer holds, and its identity; ``None`` for a
        journal being written (its writer holds its lock and lives) or gone. Read while holding
        a shared lock on it, so its writer cannot be mid-line."""
        if self._journal_path is not None and path.name == self._journal_path.name:
            return None
        try:
            fd = _open_regular(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = path.stem.split("-")[1] if path.stem.count("-") >= 1 else ""
                if not (pid.isdigit() and not _pid_alive(int(pid))):
                    return None  # another writer is appending to it
            ident = _ident(fd)
            data = _read_fd(fd, JOURNAL_LIMIT)
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return None
        finally:
            os.close(fd)
        return self._journal_rows(path, ident, data), ident

    def _journal_rows(self, path: Path, ident: Ident, data: bytes) -> list:
        """The good rows of a journal's bytes: any bytes are tolerated, a line that is not a
        checksummed row is skipped (a warning counts them, once, except a last line a kill cut
        short)."""
        lines = data.split(b"\n")
        torn = lines.pop() if lines else b""  # after the last newline: empty, or cut short by a kill
        rows, bad = [], 0
        for line in lines:
            row = Cache._journal_row(line)
            if row is None:
                bad += 1
            else:
                rows.append(row)
        last = Cache._journal_row(torn) if torn else None
        if last is not None:
            rows.append(last)
        if bad and ident not in self._warned:
            self._warned.add(ident)
            _warn(f"cache: {path.name}: {bad} damaged line{'s' if bad > 1 else ''} skipped; "
                  f"their runs will be computed again")
        return rows

    @staticmethod
    def _journal_row(line: bytes) -> Optional[tuple]:
        try:
            entry = json.loads(line.decode("utf-8"))
            key, metrics, seconds, checksum = entry["k"], entry["m"], entry["s"], entry["c"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None
        if not _valid_row(key, metrics, seconds) or checksum != _row_checksum(key, metrics, float(seconds)):
            return None
        return key, metrics, float(seconds)

    def __len__(self) -> int:
        return len(self._load())

    def get(self, key: str) -> Optional[tuple]:
        """``(metrics, seconds)`` of a cached run, or ``None``."""
        found = self._load().get(key)
        if found is None:
            return None
        return json.loads(found[0]), found[1]

    # -- writing ------------------------------------------------------------------------------

    def put(self, key: str, metrics: Mapping[str, Any], seconds: float) -> bool:
        """Journal a finished run; False (with a one-line note per column) when its metrics
        would not come back from the cache as they are — the run is then simply not cached."""
        try:
            plain = _storable_metrics(metrics)
        except _Refused as exc:
            if exc.column not in self._refused:
                self._refused.add(exc.column)
                _note(f"cache: metric column {exc.column!r} holds a {exc.what}, which would not come back from "
                      f"the cache as it went in; runs with it are not cached")
            return False
        index = self._load()
        text = json.dumps(plain, allow_nan=True, separators=(",", ":"))
        row = (key, text, float(seconds))
        if self._journal is None:
            self._open_journal()
        line = {"k": key, "m": text, "s": row[2], "c": _row_checksum(*row)}
        assert self._journal is not None
        self._journal.write(json.dumps(line) + "\n")
        self._journal.flush()
        index[key] = (text, row[2])
        self._pending.append(row)
        if len(self._pending) >= self.SEGMENT_ROWS:
            self.flush()
        return True

    def _open_journal(self) -> None:
        """A journal of this writer's own: created exclusively under a temporary name, locked,
        then renamed into sight, so no one ever sees it unlocked while this process writes it."""
        self.root.mkdir(parents=True, exist_ok=True)
        token = _token()
        tmp = self.root / f".journal-{token}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _NOFOLLOW | _CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: free
            path = self.root / f"journal-{token}.jsonl"
            os.rename(tmp, path)
            self._journal_ident = _ident(fd)
        except BaseException:
            _remove_if_same(tmp, _ident(fd))
            os.close(fd)
            raise
        self._journal_path = path
        self._journal = os.fdopen(fd, "a", encoding="utf-8")

    def _close_journal(self, remove: bool) -> None:
        if self._journal is not None:
            self._journal.close()  # releases its lock
            if remove and self._journal_path is not None:
                _remove_if_same(self._journal_path, self._journal_ident)
        self._journal = None
        self._journal_path = None
        self._journal_ident = None

    def _lock(self) -> int:
        """The folder's lock, held (a descriptor to close). Never through a planted link, never
        on anything but a regular file."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def flush(self) -> None:
        """Fold this writer's runs and the journals of writers that are gone into a Parquet
        segment (merging segments when there are many), under the folder's lock."""
        if not self._pending and self._journal is None and not self._stale_seen:
            return
        try:
            lock = self._lock()
        except OSError as exc:
            _warn(f"cache: cannot lock {self.root / LOCK_NAME} ({exc.strerror or exc}); finished runs stay "
                  f"in the journal and are folded in by a later campaign")
            self._close_journal(remove=False)
            self._pending, self._stale_seen = [], False
            return
        try:
            self._fold()
        finally:
            os.close(lock)

    def _fold(self) -> None:
        """Under the lock: what is folded is read here, and only what was read here is removed,
        after the segment holding it is in place."""
        consumed: List[Tuple[Path, Ident]] = []
        rows: dict = {}
        for journal in sorted(self.root.glob("journal-*.jsonl")):
            stale = self._stale_journal(journal)
            if stale is None:
                continue
            for key, text, seconds in stale[0]:
                rows[key] = (text, seconds)
            consumed.append((journal, stale[1]))
        for key, text, seconds in self._pending:
            rows[key] = (text, seconds)
        segments = sorted(self.root.glob("seg-*.parquet"))
        if len(segments) >= self.MAX_SEGMENTS:  # one segment of all of them
            merged: dict = {}
            for segment in segments:
                status, found, ident = self._read_segment(segment)
                if status == "gone":
                    continue
                if found is not None:
                    merged.update(found)
                if ident is not None:
                    consumed.append((segment, ident))
            rows = {**merged, **rows}
        if rows:
            self._write_segment(rows)
        for path, ident in consumed:
            _remove_if_same(path, ident)
        self._close_journal(remove=True)
        if self._index is not None:
            self._index.update(rows)
        self._pending, self._stale_seen = [], False

    def _write_segment(self, rows: dict) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"key": list(rows), "metrics": [v[0] for v in rows.values()],
                          "seconds": [v[1] for v in rows.values()]})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        path = self.root / f"seg-{time.time_ns()}-{os.getpid()}-{hashlib.sha256(data).hexdigest()}.parquet"
        tmp = self.root / f".seg-{_token()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
        ident = _ident(fd)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.rename(tmp, path)
        except BaseException:
            _remove_if_same(tmp, ident)
            raise
        return path

    close = flush

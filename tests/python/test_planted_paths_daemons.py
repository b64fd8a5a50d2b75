"""Planted paths (issue 38, item 1) for the two root daemons, ``rledbatd`` and ``ccbench-quic``:
a symbolic link (to a victim file or folder with known bytes), a hard link (to a victim), a FIFO,
a character device (/dev/null's numbers) or a directory at every path each program reads or
writes. What must hold:

- bad input is ONE line on stderr and exit status 2, at once (every subprocess has a timeout of
  a few seconds: a FIFO that is opened blocking fails the test instead of hanging it);
- a planted link never changes its target (the victim's bytes and tree are compared after);
- a planted FIFO, device or directory is left in place, untouched (same inode, same mode);
- nothing is removed that the program did not create (each folder is compared before/after).

The runs that need a network (the daemon's NFQUEUE, a QUIC transfer) happen in a namespace the
test creates and deletes; they are skipped with the reason when not root, or without namespaces
or NFQUEUE. The rest run anywhere: every refusal comes before the programs touch the system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import selectors
import signal
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RLEDBATD = Path(os.environ.get("CCBENCH_RLEDBATD") or ROOT / "target" / "release" / "rledbatd")
QUIC = ROOT / "target" / "release" / "ccbench-quic"
IS_ROOT = os.geteuid() == 0

#: The first line of `rledbatd --log` (status.rs, LOG_HEADER) and of `ccbench-quic send --log`.
RLEDBATD_LOG_HEADER = "t_s,local,remote,state,window_bytes"
QUIC_LOG_HEADER = "t_s,cwnd_bytes"
#: Seconds any one program may take to answer bad input.
QUICK = 5

needs_rledbatd = pytest.mark.skipif(not RLEDBATD.is_file(), reason="rledbatd is not built (make build)")
needs_quic = pytest.mark.skipif(not QUIC.is_file(), reason="ccbench-quic is not built (make build)")

#: What may be planted at an input or an output path.
SPECIAL = ["fifo", "device", "dir"]


# --- planting and comparing -------------------------------------------------------------------

def victim(folder: Path, name: str = "victim") -> tuple[Path, bytes]:
    """A user's file with known bytes (random, so no program output can equal it by chance)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    data = b"precious " + os.urandom(64).hex().encode() + b"\n"
    path.write_bytes(data)
    return path, data


def plant(path: Path, kind: str, target: Path | None = None) -> None:
    """Put a `kind` at `path`: symlink / hardlink (to `target`), fifo, device, dir, file."""
    if kind == "symlink":
        os.symlink(target, path)
    elif kind == "hardlink":
        os.link(target, path)
    elif kind == "fifo":
        os.mkfifo(path, 0o644)
    elif kind == "device":
        if not IS_ROOT:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 3))
    elif kind == "dir":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(b"a user's file\n")
    else:
        raise AssertionError(kind)


def ident(path: Path) -> tuple:
    """What a planted FIFO, device or directory is: compared before and after."""
    st = os.lstat(path)
    return (st.st_dev, st.st_ino, st.st_mode, st.st_rdev, st.st_size, st.st_mtime_ns)


def tree(folder: Path) -> dict:
    """Every name under `folder` (links not followed) → its inode, type and, for regular files,
    its bytes' hash: equal trees mean nothing was added, removed, replaced or written."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            what = (st.st_ino, stat.S_IFMT(st.st_mode), st.st_rdev)
            if stat.S_ISREG(st.st_mode):
                what += (hashlib.sha256(p.read_bytes()).hexdigest(),)
            elif stat.S_ISLNK(st.st_mode):
                what += (os.readlink(p),)
            out[str(p.relative_to(folder))] = what
    return out


def assert_one_line(proc, status: int = 2, *words: str) -> str:
    """The run's stderr is one line naming `words`, and it exited with `status`."""
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
    assert proc.returncode == status, (proc.returncode, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    for w in words:
        assert w in err, (w, err)
    return err


def run(*args, timeout: float = QUICK) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def stop(proc: subprocess.Popen | None) -> None:
    """End a process this test started (by its own handle), bounded."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def first_line(proc: subprocess.Popen, timeout: float) -> bytes:
    """The first stdout line of `proc` (b"" if it exits or `timeout` passes first)."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in got:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            got += chunk
    finally:
        sel.close()
    return got.split(b"\n")[0]


@contextlib.contextmanager
def netns(tag: str):
    """A network namespace of this test's own, its loopback up; deleted on the way out."""
    if not IS_ROOT:
        pytest.skip("network namespaces need root")
    name = f"ccb-planted-{tag}-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        pytest.skip(f"no network namespaces: {made.stderr.strip()}")
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True,
                       capture_output=True, timeout=10)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


# --- rledbatd: paths checked before anything changes (no namespace needed) ---------------------

#: Flags that keep a run harmless should a check wrongly pass: no iptables rules, a short life.
SAFE = ["--no-iptables", "--queue", "4904", "--duration", "1s"]


@needs_rledbatd
@pytest.mark.parametrize("kind", SPECIAL)
def test_rledbatd_config_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    config = tmp_path / "rledbatd.toml"
    plant(config, kind)
    before, planted = tree(tmp_path), ident(config)
    proc = run(RLEDBATD, "run", "--config", config, "--socket", tmp_path / "s.sock", *SAFE)
    assert_one_line(proc, 2, "--config", {"fifo": "FIFO", "device": "character device", "dir": "directory"}[kind])
    assert ident(config) == planted and tree(tmp_path) == before


@needs_rledbatd
def test_rledbatd_config_through_a_symbolic_link_is_read(tmp_path):
    """Reading changes nothing, so a link to a valid configuration is fine: the run gets past
    --config and stops at the next check (a directory at --socket)."""
    real, _ = victim(tmp_path / "etc", "real.toml")
    real.write_text('idle_timeout = "30s"\nlog_interval = "50ms"\n')
    link = tmp_path / "rledbatd.toml"
    plant(link, "symlink", real)
    plant(tmp_path / "sock", "dir")
    before = tree(tmp_path)
    proc = run(RLEDBATD, "run", "--config", link, "--socket", tmp_path / "sock", *SAFE)
    err = assert_one_line(proc, 2, "--socket")
    assert "--config" not in err
    assert tree(tmp_path) == before


@needs_rledbatd
@pytest.mark.parametrize("kind", ["symlink", *SPECIAL])
def test_rledbatd_log_that_is_a_link_or_special_file_is_refused_and_left_alone(tmp_path, kind):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    target, data = victim(tmp_path / "victims")
    log = run_dir / "rledbatd.csv"
    plant(log, kind, target)
    before_run, before_victims = tree(run_dir), tree(tmp_path / "victims")
    proc = run(RLEDBATD, "run", "--log", log, "--socket", run_dir / "s.sock", *SAFE)
    what = {"symlink": "symbolic link", "fifo": "FIFO", "device": "character device", "dir": "directory"}[kind]
    assert_one_line(proc, 2, "--log", what)
    assert target.read_bytes() == data
    # Nothing created (no socket, no scratch file), nothing removed or written.
    assert tree(run_dir) == before_run and tree(tmp_path / "victims") == before_victims


@needs_rledbatd
@pytest.mark.parametrize("kind", ["file", "symlink", "live", *SPECIAL])
def test_rledbatd_socket_path_holding_something_else_is_refused_and_left_alone(tmp_path, kind):
    """Anything but an absent path (or a dead socket) at --socket: a user's file, a link to
    one, a socket someone answers on, a FIFO, a device, a directory."""
    target, data = victim(tmp_path / "victims")
    sock = tmp_path / "rledbatd.sock"
    server = None
    if kind == "live":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(sock))
        server.listen(4)
    else:
        plant(sock, kind, target)
    try:
        before = tree(tmp_path)
        proc = run(RLEDBATD, "run", "--socket", sock, *SAFE)
        assert_one_line(proc, 2, "--socket")
        assert tree(tmp_path) == before
        assert target.read_bytes() == data
    finally:
        if server is not None:
            server.close()


@needs_rledbatd
def test_rledbatd_status_gives_up_on_a_server_that_trickles_forever(tmp_path):
    """Whatever answers at --socket may send a byte a second forever: `rledbatd status` has an
    overall deadline (status.rs, STATUS_DEADLINE = 5 s), then says so in one line."""
    sock = tmp_path / "slow.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock))
    server.listen(1)
    server.settimeout(0.2)
    done = threading.Event()

    def trickle():
        conn = None
        for _ in range(100):  # accept within 20 s at most
            if done.is_set():
                return
            try:
                conn, _ = server.accept()
                break
            except OSError:
                continue
        if conn is None:
            return
        with conn:
            for _ in range(60):  # "forever": longer than any deadline the client may have
                try:
                    conn.sendall(b"x")
                except OSError:
                    return
                if done.wait(1.0):
                    return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        t0 = time.monotonic()
        proc = run(RLEDBATD, "status", "--socket", sock, timeout=12)
        took = time.monotonic() - t0
        assert proc.returncode != 0, proc.stdout
        assert_one_line(proc, proc.returncode, "--socket", "within")
        assert 4.0 <= took <= 8.0, took
    finally:
        done.set()
        thread.join(timeout=5)
        server.close()


@needs_rledbatd
@pytest.mark.parametrize("kind", ["file", "symlink", *SPECIAL])
def test_rledbatd_status_at_a_path_that_is_not_a_socket_is_one_line(tmp_path, kind):
    target, data = victim(tmp_path / "victims")
    sock = tmp_path / "rledbatd.sock"
    plant(sock, kind, target)
    before = tree(tmp_path)
    proc = run(RLEDBATD, "status", "--socket", sock)
    assert_one_line(proc, 2, "--socket")
    assert tree(tmp_path) == before and target.read_bytes() == data


# --- rledbatd: a running daemon (NFQUEUE, in a namespace of the test's own) --------------------

@contextlib.contextmanager
def daemon(ns: str, sock: Path, queue: int, *extra):
    """`rledbatd run` inside `ns` until its socket is up; SIGTERM (bounded) on the way out.
    Skips when NFQUEUE cannot be opened here."""
    proc = subprocess.Popen(["ip", "netns", "exec", ns, str(RLEDBATD), "run", "--no-iptables", "--queue",
                             str(queue), "--socket", str(sock), "--duration", "10s", *map(str, extra)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 5
        while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if not sock.exists():
            stop(proc)
            err = proc.stderr.read()
            if "NFQUEUE" in err:
                pytest.skip(f"no NFQUEUE here: {err.strip()}")
            raise AssertionError(f"the daemon never made its socket: {err}")
        yield proc
    finally:
        stop(proc)


def terminate(proc: subprocess.Popen) -> str:
    """SIGTERM, the daemon's exit within a few seconds, and its stderr."""
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=QUICK)
    return proc.stderr.read()


@needs_rledbatd
def test_rledbatd_log_on_a_hard_link_is_a_new_file_and_the_other_name_keeps_its_bytes(tmp_path):
    """A hard link at --log passes the check (a regular file), and is replaced by a new file
    (crates/files publish): the victim, its other name, keeps its bytes. The configuration is
    read through a symbolic link on the way."""
    config_real = tmp_path / "etc" / "real.toml"
    config_real.parent.mkdir()
    config_real.write_text('idle_timeout = "30s"\nlog_interval = "50ms"\n')
    config = tmp_path / "rledbatd.toml"
    plant(config, "symlink", config_real)
    target, data = victim(tmp_path / "victims")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    log, sock = run_dir / "rledbatd.csv", run_dir / "r.sock"
    plant(log, "hardlink", target)
    with netns("log") as ns, daemon(ns, sock, 4910, "--config", config, "--log", log) as proc:
        deadline = time.monotonic() + 3
        while os.stat(log).st_ino == os.stat(target).st_ino and time.monotonic() < deadline:
            time.sleep(0.02)
        err = terminate(proc)
        assert proc.returncode == 0, err
    assert target.read_bytes() == data
    st = os.lstat(log)
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_ino != os.stat(target).st_ino
    assert log.read_text().startswith(RLEDBATD_LOG_HEADER)
    assert os.readlink(config) == str(config_real)
    # Only the log's name was replaced; the socket (ours) is gone; no scratch file is left.
    assert sorted(p.name for p in run_dir.iterdir()) == ["rledbatd.csv"]


@needs_rledbatd
@pytest.mark.parametrize("kind", ["file", "symlink", "fifo"])
def test_rledbatd_at_exit_leaves_what_was_put_at_its_socket_path(tmp_path, kind):
    """The daemon's socket moved away and a user's file (a link to one, a FIFO) put at its path
    while it runs: at SIGTERM it removes nothing but its own socket, checked by inode."""
    target, data = victim(tmp_path / "victims")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    sock = run_dir / "r.sock"
    with netns("exit") as ns, daemon(ns, sock, 4920) as proc:
        os.rename(sock, run_dir / "moved.sock")
        if kind == "file":
            (run_dir / "users").write_bytes(data)
            os.rename(run_dir / "users", sock)
        else:
            plant(sock, kind, target)
        before = tree(run_dir)
        err = terminate(proc)
        assert proc.returncode == 0, err
    assert tree(run_dir) == before, err
    if kind == "file":
        assert sock.read_bytes() == data
    assert target.read_bytes() == data
    assert "left alone" in err, err


# --- ccbench-quic send: the files to send ------------------------------------------------------

FP = "ab" * 32


@needs_quic
@pytest.mark.parametrize("kind", SPECIAL)
def test_quic_send_of_a_special_file_is_one_line_at_once(tmp_path, kind):
    """send.rs hashes every file before connecting: nothing is sent to port 9."""
    path = tmp_path / "data.bin"
    plant(path, kind)
    before, planted = tree(tmp_path), ident(path)
    t0 = time.monotonic()
    proc = run(QUIC, "send", path, "--to", "127.0.0.1:9", "--fingerprint", FP)
    assert time.monotonic() - t0 < 3
    assert_one_line(proc, 2, "data.bin")
    assert ident(path) == planted and tree(tmp_path) == before


# --- ccbench-quic recv: its identity folder (bound on the host's loopback, port 0) ------------

def recv_outcome(out: Path) -> tuple[int | None, str, str]:
    """`recv --out out` until it listens or exits: (exit status or None if listening, first
    stdout line, stderr). A listening receiver is stopped."""
    proc = subprocess.Popen([str(QUIC), "recv", "--listen", "127.0.0.1:0", "--out", str(out)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = first_line(proc, QUICK).decode(errors="replace")
        if "--fingerprint" in line:
            status = None
        else:
            proc.wait(timeout=QUICK)
            status = proc.returncode
    finally:
        stop(proc)
        proc.stdout.close()
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    return status, line, err


def identity_of(tmp_path: Path) -> Path:
    """A folder holding another receiver's identity (cert.der, key.der), made by `recv`."""
    other = tmp_path / "other"
    status, line, err = recv_outcome(other)
    assert status is None, err
    home = other / ".ccbench-quic"
    (home / "partial").rmdir()
    return home


IDENTITY_CASES = ["symlink-empty", "symlink-identity", "file", "fifo", "device", "partial-symlink",
                  "partial-fifo", "cert-fifo", "cert-dir"]


@needs_quic
@pytest.mark.parametrize("case", IDENTITY_CASES)
def test_quic_recv_refuses_what_is_planted_in_its_identity_folder(tmp_path, case):
    """OUT/.ccbench-quic, its partial/ folder and its cert.der: a link to a folder (empty, or
    holding another receiver's identity), a file, a FIFO or a device instead of the folder; a
    link or FIFO instead of partial/; a FIFO or folder instead of the certificate. Refused in one
    line, status 2, and the victim folder and the planted thing are as they were."""
    out = tmp_path / "out"
    out.mkdir()
    home = out / ".ccbench-quic"
    victims = tmp_path / "victims"
    victim(victims)
    if case == "symlink-empty":
        plant(home, "symlink", victims)
        planted = home
    elif case == "symlink-identity":
        victims = identity_of(tmp_path)
        plant(home, "symlink", victims)
        planted = home
    elif case in ("file", "fifo", "device"):
        plant(home, case)
        planted = home
    elif case.startswith("partial-"):
        status, _, err = recv_outcome(out)  # a whole identity first: only partial/ is planted
        assert status is None, err
        planted = home / "partial"
        planted.rmdir()
        plant(planted, case.split("-")[1], victims)
    else:
        home.mkdir()
        (home / "key.der").write_bytes(b"not a key\n")
        planted = home / "cert.der"
        plant(planted, case.split("-")[1])
    before_out, before_victims, planted_ident = tree(out), tree(victims), ident(planted)
    status, line, err = recv_outcome(out)
    assert tree(victims) == before_victims
    assert ident(planted) == planted_ident and tree(out) == before_out
    assert status == 2, (line, err)
    assert err.count("\n") == 1 and ".ccbench-quic" in err, err


@needs_quic
@pytest.mark.parametrize("name,kind", [("cert.der", "symlink"), ("cert.der", "hardlink"),
                                       ("key.der", "symlink"), ("key.der", "hardlink")])
def test_quic_recv_making_its_identity_replaces_a_planted_link_and_keeps_the_victim(tmp_path, name, kind):
    """A link at cert.der or key.der while the identity is being made (the other one absent):
    the new file is renamed over the name, the victim keeps its bytes."""
    out = tmp_path / "out"
    home = out / ".ccbench-quic"
    home.mkdir(parents=True)
    target, data = victim(tmp_path / "victims")
    plant(home / name, kind, target)
    status, line, err = recv_outcome(out)
    assert status is None, (line, err)
    assert target.read_bytes() == data
    for made in ("cert.der", "key.der"):
        st = os.lstat(home / made)
        assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1, made
    assert stat.S_IMODE(os.lstat(home / "key.der").st_mode) == 0o600
    assert sorted(p.name for p in home.iterdir()) == ["cert.der", "key.der", "partial"]


# --- ccbench-quic: a transfer in a namespace of the test's own ---------------------------------

class Transfer:
    """One receiver in its own namespace, and senders started beside it."""

    def __init__(self, ns: str, out: Path, fp: str):
        self.ns, self.out, self.fp = ns, out, fp
        self.partial = out / ".ccbench-quic" / "partial"

    def send(self, path: Path, *extra) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns, str(QUIC), "send", str(path), "--to",
                               "127.0.0.1:4433", "--fingerprint", self.fp, "--cc", "cubic", *map(str, extra)],
                              capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def transfer(tmp_path_factory):
    if not QUIC.is_file():
        pytest.skip("ccbench-quic is not built (make build)")
    base = tmp_path_factory.mktemp("quic")
    out = base / "out"
    with netns("quic") as ns:
        errlog = open(base / "recv.err", "wb")
        receiver = subprocess.Popen(["ip", "netns", "exec", ns, str(QUIC), "recv", "--listen", "127.0.0.1:4433",
                                     "--out", str(out)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=errlog)
        try:
            line = first_line(receiver, QUICK).decode()
            assert "--fingerprint" in line, (line, (base / "recv.err").read_text())
            yield Transfer(ns, out, line.split("--fingerprint")[1].split()[0])
        finally:
            stop(receiver)
            receiver.stdout.close()
            errlog.close()


def a_file(folder: Path, name: str) -> tuple[Path, bytes, str]:
    folder.mkdir(parents=True, exist_ok=True)
    data = os.urandom(300_000)
    path = folder / name
    path.write_bytes(data)
    return path, data, hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("kind,why", [("symlink", "symbolic link"), ("hardlink", "hard links")])
def test_quic_partial_file_planted_as_a_link_is_refused_and_the_victim_kept(tmp_path, transfer, kind, why):
    """A link at the partial file's path (OUT/.ccbench-quic/partial/<sha256>.part) before the
    transfer: the receiver refuses it (open_resumable), the sender says so in one line (status 1:
    a failure on the way), the victim keeps its bytes, the link stays, nothing arrives."""
    path, _, sha = a_file(tmp_path / "src", f"part-{kind}.bin")
    target, data = victim(tmp_path / "victims")
    part = transfer.partial / f"{sha}.part"
    plant(part, kind, target)
    before = tree(transfer.partial)
    proc = transfer.send(path)
    assert_one_line(proc, 1, path.name, why)
    assert target.read_bytes() == data
    assert tree(transfer.partial) == before
    assert not (transfer.out / path.name).exists()
    part.unlink()


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_quic_received_file_replaces_a_link_at_its_name_and_the_log_keeps_a_hard_links_bytes(
        tmp_path, transfer, kind):
    """A link at the final OUT/<name>: the received file is renamed over the name, the victim
    keeps its bytes. `send --log` at a hard link (or a link) to another victim: the log is a new
    file, that victim keeps its bytes too."""
    path, sent, _ = a_file(tmp_path / "src", f"final-{kind}.bin")
    target, data = victim(tmp_path / "victims")
    log_target, log_data = victim(tmp_path / "victims", "log-victim")
    final = transfer.out / path.name
    plant(final, kind, target)
    log = tmp_path / "cc.csv"
    plant(log, "hardlink" if kind == "symlink" else "symlink", log_target)
    proc = transfer.send(path, "--log", log, "--log-interval-ms", "10")
    assert_one_line(proc, 0, "sent " + path.name)
    assert target.read_bytes() == data and log_target.read_bytes() == log_data
    st = os.lstat(final)
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and final.read_bytes() == sent
    st = os.lstat(log)
    assert stat.S_ISREG(st.st_mode) and st.st_nlink == 1
    assert log.read_text().startswith(QUIC_LOG_HEADER)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cc.csv", "src", "victims"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_quic_received_file_whose_name_holds_a_special_file_leaves_it_alone(tmp_path, transfer, kind):
    """A FIFO, device or directory at OUT/<name>: never waited on (the receiver hashes what is
    there with O_NONBLOCK), never replaced; the sender is told in one line."""
    path, _, _ = a_file(tmp_path / "src", f"special-{kind}.bin")
    final = transfer.out / path.name
    plant(final, kind)
    planted = ident(final)
    proc = transfer.send(path)
    assert_one_line(proc, 1, path.name, "left alone")
    assert ident(final) == planted


@pytest.mark.parametrize("kind", SPECIAL)
def test_quic_send_log_at_a_special_file_is_refused_and_left_alone(tmp_path, transfer, kind):
    path, _, _ = a_file(tmp_path / "src", f"log-{kind}.bin")
    log = tmp_path / "cc.csv"
    plant(log, kind)
    planted, before = ident(log), tree(tmp_path)
    proc = transfer.send(path, "--log", log)
    assert_one_line(proc, 2, "--log")
    assert ident(log) == planted and tree(tmp_path) == before

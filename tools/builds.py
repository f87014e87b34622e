"""What builds do in an index folder, apart from what they build: the build lock that lets one
process (re)build while the others wait and then use its result, fresh names for build files, the
removal of what dead builds left, whether a process still lives, and crash points for crash tests.

Shared by the chunk index (`tools.index`) and the graph (`tools.graph`); light to import (no
DuckDB, no chunker), so a worker that only asks whether a process lives imports nothing more.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from state.progress import Progress, silent

BUILD_PREFIX = ".build-"
_LEFTOVER = re.compile(r"^\.(?:build|[^.]+\.(?:building|old))-(?:(\d+)-)?")
"""What a build writes before it swaps its result in: `.build-<pid>-…` files of the chunk index,
`.<name>.building-<pid>-…` (being built) and `.<name>.old-<pid>-…` (being replaced) folders of
the graph. They hold source text, restricted text included."""


def build_name(suffix: str = "") -> str:
    """A fresh name for a build file next to an index, owned by this process."""
    return f"{BUILD_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}{suffix}"


def remove_leftovers(folder: Path) -> list[str]:
    """Remove what builds that died left in an index folder (files of the chunk index, folders
    of the graph); a build whose process is still alive keeps its own. Returns what went."""
    gone: list[str] = []
    folder = Path(folder)
    if not folder.is_dir():
        return gone
    for p in sorted(folder.iterdir()):
        m = _LEFTOVER.match(p.name)
        if m is None or (m.group(1) and pid_alive(int(m.group(1)))):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        gone.append(p.name)
    return gone


LOCK_NAME = ".lock"
_HELD: dict[tuple[str, int], list[int]] = {}
"""Build locks this process holds: (folder, thread) -> [file descriptor, depth]."""


@contextmanager
def build_lock(folder: Path, progress: Progress = silent, what: str = "the index",
               poll: float = 0.25, remind: float = 30.0) -> Iterator[None]:
    """Hold the build lock of an index folder (`flock` on `<folder>/.lock`) while checking
    whether its indexes are current and (re)building them.

    A second process (a second first run, an `index` next to a `run`) waits here, saying so,
    and then finds the index the first one built current instead of building it again or
    tripping over its files. The lock dies with its process (a killed build never leaves it
    held) and is re-entrant within a thread."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = (str(folder.resolve()), threading.get_ident())
    held = _HELD.get(key)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(fd):
            holder = os.pread(fd, 300, 0).decode("utf-8", "replace").strip() or "another process"
            progress(f"waiting for {holder} (in {folder}): what it builds is used, not built again")
            started = last = time.monotonic()
            while not _try_lock(fd):
                time.sleep(poll)
                if time.monotonic() - last >= remind:
                    last = time.monotonic()
                    progress(f"still waiting for {holder} ({last - started:.0f}s so far)")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()}, which is building {what}".encode(), 0)
        _HELD[key] = [fd, 1]
        try:
            yield
        finally:
            del _HELD[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def pid_alive(pid: int) -> bool:
    """Whether a process runs. A zombie — killed, not yet reaped (in a container whose init does not
    reap promptly, for seconds) — does not: it holds no lock and drives no run."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (not Linux) or gone meanwhile
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def crash_point(stage: str, step: int) -> None:
    """Fault injection for crash tests: `INVESTIGATOR_CRASH_AT=index:3` kills the process there."""
    at = os.environ.get("INVESTIGATOR_CRASH_AT", "")
    if at == f"{stage}:{step}":
        os.kill(os.getpid(), signal.SIGKILL)

"""The tombstone list beside a chunk index answers `tombstoned` without DuckDB only while it
describes the index file exactly; at every other moment -- a writer killed before it wrote the
list, a write-ahead log left beside the file, any other write to the file (even one the file's
modification time cannot show), a rebuild swapping another file in, an index moved or copied, an
older index without a list, a list that cannot be read -- the answer is DuckDB's, so a deleted
source is never taken for a live one because of the list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

import tools.tombstones as tombstones
from tools.chunking import Chunk
from tools.index import build_chunk_index, tombstone
from tools.tombstones import index_state, list_path, tombstoned, write_list

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("doc-a", "doc-b", "doc-c")


class _Embedder:
    name, dim = "fake-4", 4

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))


def _chunks() -> list[Chunk]:
    return [Chunk(id=f"c-{s}", source_id=s, kind="doc", environment="prod", service="svc", version="1", revision="r",
                  status="current", trust="trusted", title=s, start=0, end=4, text=f"text of {s}") for s in SOURCES]


def _build(path: Path) -> None:
    build_chunk_index(_chunks(), path, _Embedder(), "fp")


@pytest.fixture
def index(tmp_path) -> Path:
    path = tmp_path / "idx" / "basic.duckdb"
    _build(path)
    return path


@pytest.fixture
def duckdb_reads(monkeypatch) -> list[Path]:
    """Every time DuckDB was asked (by `tombstoned` instead of the list, or by a writer writing
    the list): cleared before the read a test looks at."""
    calls: list[Path] = []
    real = tombstones._read

    def counted(path: Path) -> set[str]:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(tombstones, "_read", counted)
    return calls


def _duckdb_answer(path: Path) -> set[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT source_id FROM tombstones").fetchall()}
    finally:
        con.close()


def _killed_tombstone(path: Path, source_id: str, at: str) -> None:
    """`tombstone` in another process, killed at crash point `at`."""
    code = "import sys; from pathlib import Path; from tools.index import tombstone; tombstone(Path(sys.argv[1]), sys.argv[2])"
    proc = subprocess.run([sys.executable, "-c", code, str(path), source_id], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "INVESTIGATOR_CRASH_AT": at}, timeout=120)
    assert proc.returncode == -9, proc.stderr


def test_after_a_tombstone_the_list_answers_without_duckdb(index, duckdb_reads):
    tombstone(index, "doc-a")
    assert list_path(index).exists()
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-a"} == _duckdb_answer(index)
    assert duckdb_reads == []


def test_a_build_writes_the_list_of_the_file_it_swapped_in_with_the_tombstones_carried_over(index, duckdb_reads):
    tombstone(index, "doc-b")
    inode = index.stat().st_ino
    _build(index)
    assert index.stat().st_ino != inode
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-b"} and duckdb_reads == []


def test_an_older_index_without_a_list_is_read_with_duckdb(index, duckdb_reads):
    tombstone(index, "doc-a")
    list_path(index).unlink()
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-a"}
    assert duckdb_reads == [index]


def test_a_list_that_cannot_be_read_falls_back_to_duckdb(index, duckdb_reads):
    tombstone(index, "doc-a")
    duckdb_reads.clear()
    for garbage in ("", "{", '{"version": 1}', '{"version": 1, "state": 3, "tombstoned": []}', "[]"):
        list_path(index).write_text(garbage)
        assert tombstoned(index) == {"doc-a"}
    assert len(duckdb_reads) == 5


@pytest.mark.parametrize("at", ["tombstone:1", "tombstone:2"])
def test_a_tombstone_killed_before_its_list_is_written_is_seen_through_duckdb(index, duckdb_reads, at):
    """tombstone:1 -- rows committed to the write-ahead log, not yet checkpointed into the file;
    tombstone:2 -- checkpointed and closed, the list not yet written. The list of the state
    before was removed first either way."""
    tombstone(index, "doc-a")
    _killed_tombstone(index, "doc-b", at)
    duckdb_reads.clear()
    assert not list_path(index).exists()
    assert Path(f"{index}.wal").exists() == (at == "tombstone:1")
    assert tombstoned(index) == {"doc-a", "doc-b"} == _duckdb_answer(index)
    assert duckdb_reads


def test_a_list_put_back_beside_a_file_that_was_written_since_is_not_used(index, duckdb_reads):
    """The strongest form of a stale list: the previous, valid list restored after another write
    (a chunk update, a tombstone by a writer that does not know the list), and even made to name
    the file's new size and modification time, as a write within the same clock tick that left
    the size alone would: the headers DuckDB rewrote at the checkpoint still tell them apart."""
    tombstone(index, "doc-a")
    saved = json.loads(list_path(index).read_text())
    con = duckdb.connect(str(index))
    try:
        con.execute("INSERT INTO tombstones VALUES ('doc-c', now(), 'by another writer')")
        con.execute("DELETE FROM chunks WHERE source_id = 'doc-c'")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    now = index_state(index)
    assert now is not None
    list_path(index).write_text(json.dumps(saved))
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-a", "doc-c"} == _duckdb_answer(index)
    assert duckdb_reads
    list_path(index).write_text(json.dumps({**saved, "state": [*now[:4], saved["state"][4]]}))
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-a", "doc-c"}
    assert duckdb_reads


def test_a_write_ahead_log_beside_the_file_makes_the_list_unusable(index, duckdb_reads):
    """A writer that does not know the list, killed with committed rows in the write-ahead log:
    the file and its list are as they were, only the log says more."""
    tombstone(index, "doc-a")
    before = index_state(index)
    code = ("import os, sys, duckdb; con = duckdb.connect(sys.argv[1]); "
            "con.execute(\"INSERT INTO tombstones VALUES ('doc-c', now(), 'in the log')\"); os.kill(os.getpid(), 9)")
    proc = subprocess.run([sys.executable, "-c", code, str(index)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    assert Path(f"{index}.wal").exists() and list_path(index).exists()
    assert index_state(index) is None
    duckdb_reads.clear()
    assert tombstoned(index) == {"doc-a", "doc-c"}
    assert duckdb_reads
    Path(f"{index}.wal").unlink()  # the log alone made the difference
    assert index_state(index) == before and tombstoned(index) == {"doc-a"}


def test_a_rebuild_killed_after_the_swap_leaves_no_list_of_the_file_it_replaced(index, duckdb_reads, tmp_path):
    tombstone(index, "doc-a")
    code = ("import sys; from pathlib import Path; sys.path.insert(0, 'tests'); "
            "from test_tombstone_list import _build; _build(Path(sys.argv[1]))")
    proc = subprocess.run([sys.executable, "-c", code, str(index)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "INVESTIGATOR_CRASH_AT": "index:8"}, timeout=120)
    assert proc.returncode == -9, proc.stderr
    duckdb_reads.clear()
    assert not list_path(index).exists()
    assert tombstoned(index) == {"doc-a"} and duckdb_reads


def test_a_list_describes_only_its_own_file(index, duckdb_reads, tmp_path):
    """An index moved away reads as no index (as without a list); an older copy put in its place is
    read with DuckDB, not answered by the list of the file it replaced."""
    backup = tmp_path / "backup.duckdb"
    shutil.copy2(index, backup)
    tombstone(index, "doc-a")
    moved = tmp_path / "moved.duckdb"
    index.rename(moved)
    assert tombstoned(index) == set()
    shutil.copy2(backup, index)
    duckdb_reads.clear()
    assert tombstoned(index) == set() == _duckdb_answer(index)
    assert duckdb_reads == [index]
    shutil.copy2(moved, index)  # a copy of the tombstoned file: another inode, so DuckDB again
    assert tombstoned(index) == {"doc-a"} and len(duckdb_reads) == 2


def test_a_list_is_not_written_when_the_file_changes_while_it_is_read(index, monkeypatch):
    real = tombstones._read

    def written_meanwhile(path: Path) -> set[str]:
        ids = real(path)
        con = duckdb.connect(str(path))
        con.execute("INSERT INTO tombstones VALUES ('doc-c', now(), 'meanwhile')")
        con.close()
        return ids

    monkeypatch.setattr(tombstones, "_read", written_meanwhile)
    assert write_list(index) is False
    assert not list_path(index).exists()

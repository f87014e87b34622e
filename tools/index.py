"""The shared ingestion index of a case, kept in DuckDB.

One file per case holds the chunks (text, offsets, metadata, vectors), the metric points,
log lines, change records and the other structured records, plus tombstones. Both retrieval
tools read their chunks from here; the structured tools answer time-window queries here.
Vectors are cached by text hash, so a rebuild re-embeds only what changed.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from state import Frozen, content_hash, stable_id
from state.errors import IndexMissing
from state.profile import Profile
from tools import derive
from tools.chunking import Chunk, chunk_source
from tools.corpus import SourceDoc, load_manifest, load_sources
from tools.embedding import Embedder
from tools.entities import EntityExtractor
from tools.profile import default_profile

SCHEMA_VERSION = 2
Progress = Callable[[str], None]


class IndexInfo(Frozen):
    path: str
    fingerprint: str
    chunks: int
    sources: int
    embedded: int
    """Chunks embedded in this build (the rest came from the vector cache)."""
    seconds: float
    bytes: int


def corpus_fingerprint(docs: list[SourceDoc], tombstones: set[str]) -> str:
    return stable_id(SCHEMA_VERSION, sorted((d.id, d.revision) for d in docs if d.id not in tombstones))


def _schema(con: duckdb.DuckDBPyConnection, dim: int) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute(f"CREATE TABLE IF NOT EXISTS embed_cache (hash VARCHAR PRIMARY KEY, vec FLOAT[{dim}])")
    con.execute("CREATE TABLE IF NOT EXISTS tombstones (source_id VARCHAR PRIMARY KEY, deleted_at TIMESTAMPTZ, reason VARCHAR)")
    for table in STRUCTURED_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(f"""CREATE TABLE chunks (chunk_id VARCHAR PRIMARY KEY, source_id VARCHAR, kind VARCHAR,
        environment VARCHAR, service VARCHAR, version VARCHAR, revision VARCHAR, status VARCHAR, trust VARCHAR,
        title VARCHAR, start_ INTEGER, end_ INTEGER, text VARCHAR, ts TIMESTAMPTZ, vec FLOAT[{dim}])""")
    con.execute("""CREATE TABLE sources (source_id VARCHAR PRIMARY KEY, kind VARCHAR, environment VARCHAR,
        service VARCHAR, version VARCHAR, revision VARCHAR, status VARCHAR, trust VARCHAR, title VARCHAR)""")
    con.execute("""CREATE TABLE streams (source_id VARCHAR, kind VARCHAR, environment VARCHAR, signal VARCHAR,
        entity VARCHAR, key VARCHAR, metric VARCHAR, role VARCHAR, start_ INTEGER, end_ INTEGER)""")
    con.execute("""CREATE TABLE relations (source_id VARCHAR, kind VARCHAR, environment VARCHAR, src VARCHAR,
        dst VARCHAR, relation VARCHAR, via VARCHAR, start_ INTEGER, end_ INTEGER)""")
    con.execute("""CREATE TABLE placements (source_id VARCHAR, environment VARCHAR, workload VARCHAR, node VARCHAR,
        pod VARCHAR, start_ INTEGER, end_ INTEGER)""")
    con.execute("""CREATE TABLE changes (source_id VARCHAR, change_id VARCHAR, type VARCHAR, entity VARCHAR,
        target VARCHAR, environment VARCHAR, at_ TIMESTAMPTZ, started_at TIMESTAMPTZ, completed_at TIMESTAMPTZ,
        template_hash VARCHAR, start_ INTEGER, end_ INTEGER)""")
    con.execute("""CREATE TABLE rollouts (source_id VARCHAR, workload VARCHAR, template_hash VARCHAR, ts TIMESTAMPTZ,
        start_ INTEGER, end_ INTEGER)""")
    con.execute("""CREATE TABLE records (source_id VARCHAR, kind VARCHAR, service VARCHAR, environment VARCHAR,
        start_ INTEGER, end_ INTEGER)""")


STRUCTURED_TABLES = ("chunks", "sources", "streams", "relations", "placements", "changes", "rollouts", "records",
                     "metric_points", "log_lines")


def build_index(case_dir: Path, path: Path, embedder: Embedder, progress: Progress = lambda _m: None,
                docs: list[SourceDoc] | None = None, profile: Profile | None = None) -> IndexInfo:
    """(Re)build the case index at `path` from the case's sources (parsed here unless given),
    honouring tombstones."""
    docs = docs if docs is not None else load_sources(case_dir, load_manifest(case_dir))
    dead = tombstoned(path)
    live = [d for d in docs if d.id not in dead]
    chunks = [c for d in live for c in chunk_source(d)]
    progress(f"parsed {len(live)} sources into {len(chunks)} chunks")
    return build_chunk_index(chunks, path, embedder, corpus_fingerprint(docs, dead), live, progress,
                             profile=profile)


def build_chunk_index(chunks: list[Chunk], path: Path, embedder: Embedder, fingerprint: str,
                      docs: list[SourceDoc] = (), progress: Progress = lambda _m: None,
                      profile: Profile | None = None) -> IndexInfo:
    """Write chunks (with vectors, cached by text hash) and the docs' structured records to `path`.

    The index is built into a fresh file next to `path`, checked against what was parsed, and
    only then swapped in (one rename): a build killed at any point leaves the previous index
    (or none) in place, never a partial one that looks up to date. The embedding cache and the
    tombstones of the previous index are carried over."""
    t0 = time.perf_counter()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path.parent)
    release_readers(path)
    tmp = path.with_name(f"{BUILD_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}.duckdb")
    docs = list(docs)
    try:
        con = duckdb.connect(str(tmp))
        try:
            _schema(con, embedder.dim)
            crash_point("index", 1)
            if path.exists():
                con.execute(f"ATTACH '{path}' AS old (READ_ONLY)")
                try:
                    con.execute("INSERT OR REPLACE INTO embed_cache SELECT * FROM old.embed_cache")
                    con.execute("INSERT OR REPLACE INTO tombstones SELECT * FROM old.tombstones")
                except duckdb.Error:  # an older or broken index: nothing worth carrying over
                    pass
                finally:
                    con.execute("DETACH old")
            crash_point("index", 2)
            vecs, embedded = _vectors(con, chunks, embedder, progress)
            crash_point("index", 3)
            _insert_chunks(con, chunks, vecs, embedder.dim)
            crash_point("index", 4)
            _structured(con, docs, profile or default_profile())
            crash_point("index", 5)
            _verify(con, chunks, docs)
            con.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?), ('embedder', ?), ('dim', ?)",
                        [fingerprint, embedder.name, str(embedder.dim)])
            crash_point("index", 6)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        crash_point("index", 7)
        os.replace(tmp, path)
        crash_point("index", 8)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            if leftover.exists():
                leftover.unlink()
    info = IndexInfo(path=str(path), fingerprint=fingerprint, chunks=len(chunks),
                     sources=len({c.source_id for c in chunks}), embedded=embedded,
                     seconds=round(time.perf_counter() - t0, 3), bytes=path.stat().st_size)
    path.with_suffix(".info.json").write_text(info.model_dump_json(indent=2))
    crash_point("index", 9)
    progress(f"index built: {info.chunks} chunks, {info.embedded} embedded, {info.seconds}s")
    return info


BUILD_PREFIX = ".build-"


def remove_leftovers(folder: Path) -> None:
    """Build files of builds that died (their process is gone) are removed."""
    for p in Path(folder).glob(f"{BUILD_PREFIX}*"):
        pid = p.name[len(BUILD_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and pid_alive(int(pid)):
            continue
        p.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True


def crash_point(stage: str, step: int) -> None:
    """Fault injection for crash tests: `INVESTIGATOR_CRASH_AT=index:3` kills the process there."""
    at = os.environ.get("INVESTIGATOR_CRASH_AT", "")
    if at == f"{stage}:{step}":
        os.kill(os.getpid(), signal.SIGKILL)


def _verify(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], docs: list[SourceDoc]) -> None:
    """The written index holds every chunk and every source parsed: a partial build is refused."""
    n_chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    n_sources = con.execute("SELECT count(*) FROM sources").fetchone()[0]
    if n_chunks != len(chunks) or n_sources != len(docs):
        raise IndexMissing(f"index build incomplete: {n_chunks}/{len(chunks)} chunks, {n_sources}/{len(docs)} sources")


def last_build(path: Path) -> IndexInfo | None:
    """What the last build of the index at `path` measured (time, size), if recorded."""
    info = Path(path).with_suffix(".info.json")
    return IndexInfo.model_validate_json(info.read_text()) if info.exists() else None


def _vec_column(vecs: np.ndarray, dim: int) -> pa.Array:
    return pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(vecs, dtype=np.float32).ravel()), dim)


def _insert_chunks(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], vecs: np.ndarray, dim: int) -> None:
    """Bulk insert through Arrow: row-by-row inserts of vectors are far too slow at 10k+ chunks."""
    if not chunks:
        return
    table = pa.table({
        "chunk_id": [c.id for c in chunks], "source_id": [c.source_id for c in chunks],
        "kind": [c.kind for c in chunks], "environment": [c.environment for c in chunks],
        "service": [c.service for c in chunks], "version": [c.version for c in chunks],
        "revision": [c.revision for c in chunks], "status": [c.status for c in chunks],
        "trust": [c.trust for c in chunks], "title": [c.title for c in chunks],
        "start_": pa.array([c.start for c in chunks], pa.int32()), "end_": pa.array([c.end for c in chunks], pa.int32()),
        "text": [c.text for c in chunks], "ts": pa.array([c.ts for c in chunks], pa.timestamp("us", tz="UTC")),
        "vec": _vec_column(vecs, dim),
    })
    con.register("new_chunks", table)
    con.execute("INSERT INTO chunks SELECT * FROM new_chunks")
    con.unregister("new_chunks")


def _vectors(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], embedder: Embedder,
             progress: Progress) -> tuple[np.ndarray, int]:
    hashes = [content_hash(embedder.name + "\x1f" + c.text) for c in chunks]
    cached: dict[str, np.ndarray] = {}
    if hashes:
        con.register("want", pa.table({"hash": sorted(set(hashes))}))
        for h, v in con.execute("SELECT e.hash, e.vec FROM embed_cache e JOIN want USING (hash)").fetchall():
            cached[h] = np.asarray(v, dtype=np.float32)
        con.unregister("want")
    todo = sorted({h: i for i, h in enumerate(hashes) if h not in cached}.items(), key=lambda x: x[1])
    if todo:
        progress(f"embedding {len(todo)} chunks with {embedder.name}")
        fresh = embedder.embed([chunks[i].text for _h, i in todo])
        con.register("fresh", pa.table({"hash": [h for h, _i in todo], "vec": _vec_column(fresh, embedder.dim)}))
        con.execute("INSERT OR REPLACE INTO embed_cache SELECT * FROM fresh")
        con.unregister("fresh")
        cached.update({h: fresh[j] for j, (h, _i) in enumerate(todo)})
    mat = np.array([cached[h] for h in hashes], dtype=np.float32).reshape(len(chunks), embedder.dim)
    return mat, len(todo)


def _structured(con: duckdb.DuckDBPyConnection, docs: list[SourceDoc], profile: Profile) -> None:
    """What each source can answer: its signal streams, stated relations, placements, changes.

    Names are resolved with a registry of every source: the index only says which sources a
    lookup should read back; what is established comes from the read, with the registry of
    the sources the principal may read."""
    if not docs:
        return
    con.executemany("INSERT INTO sources VALUES (?,?,?,?,?,?,?,?,?)",
                    [(d.id, d.kind, d.entry.environment, d.entry.service, d.version, d.revision, d.status,
                      d.entry.trust, d.title) for d in docs])
    reg = EntityExtractor.from_sources(docs, profile)
    streams_, relations, placements, changes, rollouts, records = [], [], [], [], [], []
    for d in docs:
        env = d.entry.environment
        for st in derive.streams(d, reg, profile):
            streams_.append((d.id, d.kind, env, st.signal, st.entity, st.key, st.metric, st.role, st.start, st.end))
        for f in derive.relations_of(d, reg, profile):
            if f.kind == "relation":
                relations.append((d.id, d.kind, f.environment if f.environment != "*" else env, f.source, f.target,
                                  f.relation, f.via, f.at.start if f.at else 0, f.at.end if f.at else 0))
            elif f.kind == "placement":
                placements.append((d.id, env, f.workload, f.node, f.pod, f.at.start if f.at else 0, f.at.end if f.at else 0))
        for f in derive.change_facts(d, reg, profile):
            changes.append((d.id, f.id, f.type, f.entity, f.target, f.environment, f.effective, f.started_at,
                            f.completed_at, f.template_hash, f.at.start if f.at else 0, f.at.end if f.at else 0))
        for f in derive.rollout_dates(d, reg):
            rollouts.append((d.id, f.workload, f.template_hash, f.ts, f.at.start if f.at else 0, f.at.end if f.at else 0))
        if d.kind in ("mapping", "ownership", "config", "catalog"):
            svc = reg.resolve(d.about) or d.about
            records.append((d.id, d.kind, svc, env, 0, len(d.text)))
    for table, rows in (("streams", streams_), ("relations", relations), ("placements", placements),
                        ("changes", changes), ("rollouts", rollouts), ("records", records)):
        if rows:
            con.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)


def tombstone(path: Path, source_id: str, reason: str = "deleted") -> None:
    """Mark a source deleted: it is dropped now and never indexed or recalled again."""
    release_readers(path)
    con = open_index(path, read_only=False)
    try:
        con.execute("INSERT OR REPLACE INTO tombstones VALUES (?, now(), ?)", [source_id, reason])
        for table in STRUCTURED_TABLES[:-2]:
            con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])
    finally:
        con.close()


class _SharedReaders:
    """One read-only connection per index file and process, reopened when the file changes.

    Connecting costs ~30 ms (the catalog is read each time) and a run makes a few hundred
    lookups. A rebuild swaps in a new file (another inode) and a tombstone rewrites rows, so
    the file's identity and modification time are part of the key; writers in this process
    release the connection first, and a run releases it when it ends, so a writer in another
    process waits only while a run is being driven."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cons: dict[str, tuple[tuple[int, int, int], duckdb.DuckDBPyConnection]] = {}

    @contextmanager
    def cursor(self, path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
        name = str(Path(path).resolve())
        with self._lock:
            try:
                st = os.stat(name)
            except FileNotFoundError:
                self._close(name)
                raise IndexMissing(f"no index at {path}: run `investigator index CASE` first") from None
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            held = self._cons.get(name)
            if held is None or held[0] != key:
                self._close(name)
                held = (key, duckdb.connect(name, read_only=True))
                self._cons[name] = held
            cur = held[1].cursor()
            try:
                yield cur
            finally:
                cur.close()

    def _close(self, name: str) -> None:
        held = self._cons.pop(name, None)
        if held is not None:
            held[1].close()

    def release(self, path: Path | None = None) -> None:
        with self._lock:
            for name in ([str(Path(path).resolve())] if path is not None else list(self._cons)):
                self._close(name)


_READERS = _SharedReaders()
reading = _READERS.cursor
"""`with reading(path) as con:` a cursor on the process's shared read-only connection to an index."""
release_readers = _READERS.release
"""Close the shared connection to one index (before writing it) or to all (when a run ends)."""


def open_index(path: Path, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    if not Path(path).exists():
        raise IndexMissing(f"no index at {path}: run `investigator index CASE` first")
    return duckdb.connect(str(path), read_only=read_only)


def index_fingerprint(path: Path) -> str | None:
    if not Path(path).exists():
        return None
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    except duckdb.Error:
        return None
    finally:
        con.close()
    return row[0] if row else None


def tombstoned(path: Path) -> set[str]:
    if not Path(path).exists():
        return set()
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT source_id FROM tombstones").fetchall()}
    finally:
        con.close()

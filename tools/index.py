"""The shared ingestion index of a case, kept in DuckDB.

One file per case holds the chunks (text, offsets, metadata, vectors), the metric points,
log lines, change records and the other structured records, plus tombstones. Both retrieval
tools read their chunks from here; the structured tools answer time-window queries here.
Vectors are cached by text hash, so a rebuild re-embeds only what changed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np

from state import Frozen, content_hash, stable_id
from state.errors import IndexMissing
from state.profile import Profile
from state.progress import Progress, Ticker, silent
from tools import columns, derive, derive_relations
from tools.builds import build_name, crash_point, remove_leftovers
from tools.chunking import Chunk, chunk_source
from tools.tombstones import forget_list, tombstoned, write_list
from tools.corpus import SourceDoc, load_sources
from tools.manifest import load_manifest
from tools.embedding import Embedder
from tools.entities import EntityExtractor
from tools.profile import default_profile
from tools.stages import StageClock, StageTime, stage_summary

SCHEMA_VERSION = 3


class IndexInfo(Frozen):
    path: str
    fingerprint: str
    chunks: int
    sources: int
    embedded: int
    """Chunks embedded in this build (the rest came from the vector cache)."""
    seconds: float
    """Wall seconds of the whole build (parsing included when the build parsed, or was handed the
    clock that timed the parsing)."""
    bytes: int
    stages: dict[str, StageTime] = {}
    """Time per stage, in the order they ran: parse (when timed), chunk, embed (cache look-ups
    included), write (the new file: schema, chunks and vectors, meta, checkpoint, swap), entities
    (the sources table, the entity registry and the structured records), verify. They add up to
    at most `seconds`; what is left is locking and bookkeeping between them."""

    def stage_summary(self) -> str:
        return stage_summary(self.stages)


def corpus_fingerprint(docs: list[SourceDoc], tombstones: set[str], profile: Profile | None = None) -> str:
    """What the index is built from: every live source as parsed (its text, its manifest entry
    but the groups -- access is read from the manifest at query time, never from the index --
    and everything parsed from it) and the profile the structured records are derived with.
    A changed environment in `sources.yaml`, a changed profile or sidecar is a stale index."""
    parsed = sorted((d.id, content_hash(d.model_dump_json(exclude={"entry": {"groups"}})))
                    for d in docs if d.id not in tombstones)
    return stable_id(SCHEMA_VERSION, derive.DERIVATION, content_hash((profile or default_profile()).model_dump_json()),
                     parsed)


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
        start_ INTEGER, end_ INTEGER, captured_at TIMESTAMPTZ)""")


STRUCTURED_TABLES = ("chunks", "sources", "streams", "relations", "placements", "changes", "rollouts", "records",
                     "metric_points", "log_lines")


def build_index(case_dir: Path, path: Path, embedder: Embedder, progress: Progress = silent,
                docs: list[SourceDoc] | None = None, profile: Profile | None = None,
                vectors_from: Sequence[Path] = (), clock: StageClock | None = None) -> IndexInfo:
    """(Re)build the case index at `path` from the case's sources (parsed here unless given),
    honouring tombstones. `vectors_from`: other indexes whose cached vectors may be reused.
    `clock`: the build's stage clock, when the caller started it (to time its parsing)."""
    clock = clock or StageClock(progress)
    if docs is None:
        with clock.stage("parse"):
            docs = load_sources(case_dir, load_manifest(case_dir))
    dead = tombstoned(path)
    live = [d for d in docs if d.id not in dead]
    with clock.stage("chunk"):
        chunks = [c for d in live for c in chunk_source(d)]
    progress(f"parsed {len(live)} sources into {len(chunks)} chunks")
    return build_chunk_index(chunks, path, embedder, corpus_fingerprint(docs, dead, profile), live, progress,
                             profile=profile, vectors_from=vectors_from, clock=clock)


def build_chunk_index(chunks: list[Chunk], path: Path, embedder: Embedder, fingerprint: str,
                      docs: list[SourceDoc] = (), progress: Progress = silent,
                      profile: Profile | None = None, vectors_from: Sequence[Path] = (),
                      clock: StageClock | None = None) -> IndexInfo:
    """Write chunks (with vectors, cached by text hash) and the docs' structured records to `path`.

    The index is built into a fresh file next to `path`, checked against what was parsed, and
    only then swapped in (one rename): a build killed at any point leaves the previous index
    (or none) in place, never a partial one that looks up to date. The embedding cache and the
    tombstones of the previous index are carried over; vectors still missing are looked up in
    the embedding caches of `vectors_from` (a vector is keyed by the embedder and the exact
    text, so any index's cache will do) before anything is embedded. `clock` times the stages
    (IndexInfo.stages); a fresh one starts here when none is given."""
    clock = clock or StageClock(progress)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path.parent)
    release_readers(path)
    tmp = path.with_name(build_name(".duckdb"))
    docs = list(docs)
    try:
        con = duckdb.connect(str(tmp))
        try:
            with clock.stage("write"):
                with _transaction(con):
                    _schema(con, embedder.dim)
                crash_point("index", 1)
                if path.exists():
                    _carry_over(con, path)
            crash_point("index", 2)
            with clock.stage("embed", beat=False):  # it counts its chunks itself
                vecs, embedded = _vectors(con, chunks, embedder, progress, vectors_from)
            crash_point("index", 3)
            with _transaction(con):  # one commit for the rows, not one per statement
                with clock.stage("write"):
                    _insert_chunks(con, chunks, vecs, embedder.dim)
                crash_point("index", 4)
                with clock.stage("entities"):
                    derived = _structured(con, docs, profile or default_profile())
                crash_point("index", 5)
                with clock.stage("verify"):
                    _verify(con, chunks, docs, derived)
                with clock.stage("write"):
                    con.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?), ('embedder', ?), ('dim', ?)",
                                [fingerprint, embedder.name, str(embedder.dim)])
                crash_point("index", 6)
            with clock.stage("write"):
                con.execute("CHECKPOINT")
        finally:
            con.close()
        crash_point("index", 7)
        with clock.stage("write"):
            forget_list(path)
            os.replace(tmp, path)
            crash_point("index", 8)
            write_list(path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            if leftover.exists():
                leftover.unlink()
    info = IndexInfo(path=str(path), fingerprint=fingerprint, chunks=len(chunks),
                     sources=len({c.source_id for c in chunks}), embedded=embedded,
                     seconds=round(clock.elapsed(), 3), bytes=path.stat().st_size, stages=clock.times())
    info_path = path.with_suffix(".info.json")
    info_tmp = info_path.with_name(build_name(".json"))
    info_tmp.write_text(info.model_dump_json(indent=2))
    os.replace(info_tmp, info_path)
    crash_point("index", 9)
    progress(f"index built: {info.chunks} chunks, {info.embedded} embedded, {info.seconds}s; "
             f"stages: {info.stage_summary()}")
    return info


def index_meta(path: Path) -> dict[str, str] | None:
    """The `meta` table of the index at `path` (fingerprint, embedder, dim); None when there is
    no readable index."""
    if not Path(path).exists():
        return None
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.Error:
        return None
    finally:
        con.close()


def _verify(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], docs: list[SourceDoc],
            derived: dict[str, int] | None = None) -> None:
    """The written index holds every chunk, every source parsed and every record derived from
    them (streams, relations, placements, changes, rollouts, records): a partial build is refused."""
    want = {"chunks": len(chunks), "sources": len(docs), **(derived or {})}
    have = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in want}
    short = [f"{have[t]}/{n} {t}" for t, n in want.items() if have[t] != n]
    if short:
        raise IndexMissing(f"index build incomplete: {', '.join(short)}")


def last_build(path: Path) -> IndexInfo | None:
    """What the last build of the index at `path` measured (time, size), if recorded."""
    info = Path(path).with_suffix(".info.json")
    try:
        return IndexInfo.model_validate_json(info.read_text())
    except (OSError, ValueError):
        return None


def _insert_chunks(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], vecs: np.ndarray, dim: int) -> None:
    """Bulk insert through Arrow: row-by-row inserts of vectors are far too slow at 10k+ chunks."""
    if not chunks:
        return
    text_fields = ("id", "source_id", "kind", "environment", "service", "version", "revision", "status", "trust",
                   "title")
    table = columns.table({
        **{("chunk_id" if f == "id" else f): columns.strings([getattr(c, f) for c in chunks]) for f in text_fields},
        "start_": columns.int32s([c.start for c in chunks]), "end_": columns.int32s([c.end for c in chunks]),
        "text": columns.strings([c.text for c in chunks]), "ts": columns.timestamps([c.ts for c in chunks]),
        "vec": columns.vectors(vecs, dim),
    })
    con.register("new_chunks", table)
    con.execute("INSERT INTO chunks SELECT * FROM new_chunks")
    con.unregister("new_chunks")


def _vectors(con: duckdb.DuckDBPyConnection, chunks: list[Chunk], embedder: Embedder,
             progress: Progress, vectors_from: Sequence[Path] = ()) -> tuple[np.ndarray, int]:
    hashes = [content_hash(embedder.name + "\x1f" + c.text) for c in chunks]
    cached: dict[str, np.ndarray] = {}
    if hashes:
        con.register("want", columns.table({"hash": columns.strings(sorted(set(hashes)))}))
        for other in vectors_from:
            if con.execute("SELECT count(*) FROM want LEFT JOIN embed_cache e USING (hash) "
                           "WHERE e.hash IS NULL").fetchone()[0] == 0:
                break
            _copy_vectors(con, Path(other))
        got = con.execute("SELECT e.hash, e.vec FROM embed_cache e JOIN want USING (hash)").fetchnumpy()
        cached.update(zip(got["hash"].tolist(), got["vec"]))  # NumPy rows: tuples of floats cost ~0.1 ms each
        con.unregister("want")
    todo = sorted({h: i for i, h in enumerate(hashes) if h not in cached}.items(), key=lambda x: x[1])
    if todo:
        progress(f"embedding {len(todo)} chunks with {embedder.name}")
        with Ticker(progress, "embedding", total=len(todo), unit="chunks", beat=True) as ticker:
            fresh = embedder.embed([chunks[i].text for _h, i in todo])
            ticker.advance(len(todo))
        con.register("fresh", columns.table({"hash": columns.strings([h for h, _i in todo]),
                                             "vec": columns.vectors(fresh, embedder.dim)}))
        con.execute("INSERT OR REPLACE INTO embed_cache SELECT * FROM fresh")
        con.unregister("fresh")
        cached.update({h: fresh[j] for j, (h, _i) in enumerate(todo)})
    mat = np.array([cached[h] for h in hashes], dtype=np.float32).reshape(len(chunks), embedder.dim)
    return mat, len(todo)


@contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Statements committed together (rolled back on an error: the build file is discarded anyway)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _carry_over(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """The embedding cache and the tombstones of the index being replaced."""
    con.execute(f"ATTACH {_sql_str(path)} AS old (READ_ONLY)")
    try:
        con.execute("INSERT OR REPLACE INTO embed_cache SELECT * FROM old.embed_cache")
        con.execute("INSERT OR REPLACE INTO tombstones SELECT * FROM old.tombstones")
    except duckdb.Error:  # an older or broken index: nothing worth carrying over
        pass
    finally:
        con.execute("DETACH old")


def _sql_str(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _copy_vectors(con: duckdb.DuckDBPyConnection, other: Path) -> None:
    """Copy the wanted vectors another index has cached (skipped when it cannot be read now)."""
    try:
        con.execute(f"ATTACH {_sql_str(other)} AS other (READ_ONLY)")
    except duckdb.Error:
        return
    try:
        con.execute("INSERT OR IGNORE INTO embed_cache SELECT o.hash, o.vec FROM other.embed_cache o "
                    "JOIN want USING (hash)")
    except duckdb.Error:  # an older index, or another dimension
        pass
    finally:
        con.execute("DETACH other")


def _structured(con: duckdb.DuckDBPyConnection, docs: list[SourceDoc], profile: Profile) -> dict[str, int]:
    """What each source can answer: its signal streams, stated relations, placements, changes.
    Returns the rows derived per table (for the completeness check).

    Names are resolved with a registry of every source: the index only says which sources a
    lookup should read back; what is established comes from the read, with the registry of
    the sources the principal may read."""
    if not docs:
        return {}
    con.executemany("INSERT INTO sources VALUES (?,?,?,?,?,?,?,?,?)",
                    [(d.id, d.kind, d.entry.environment, d.entry.service, d.version, d.revision, d.status,
                      d.entry.trust, d.title) for d in docs])
    reg = EntityExtractor.from_sources(docs, profile)
    streams_, relations, placements, changes, rollouts, records = [], [], [], [], [], []
    for d in docs:
        env = d.entry.environment
        for st in derive.streams(d, reg, profile):
            streams_.append((d.id, d.kind, env, st.signal, st.entity, st.key, st.metric, st.role, st.start, st.end))
        for f in derive_relations.relations_of(d, reg, profile):
            if f.kind == "relation":
                relations.append((d.id, d.kind, f.environment if f.environment != "*" else env, f.source, f.target,
                                  f.relation, f.via, f.at.start if f.at else 0, f.at.end if f.at else 0))
            elif f.kind == "placement":
                placements.append((d.id, env, f.workload, f.node, f.pod, f.at.start if f.at else 0, f.at.end if f.at else 0))
        for f in derive.change_facts(d, reg, profile):
            # one row per entity a change touched: a push to several targets is found by each
            for target in dict.fromkeys([f.target, *f.targets]) if f.targets else [f.target]:
                changes.append((d.id, f.id, f.type, f.entity, target, f.environment, f.effective, f.started_at,
                                f.completed_at, f.template_hash, f.at.start if f.at else 0, f.at.end if f.at else 0))
        for f in derive.rollout_dates(d, reg):
            rollouts.append((d.id, f.workload, f.template_hash, f.ts, f.at.start if f.at else 0, f.at.end if f.at else 0))
        if d.kind in ("mapping", "ownership", "config", "catalog"):
            svc = reg.resolve(d.about) or d.about
            records.append((d.id, d.kind, svc, env, 0, len(d.text), d.entry.captured_at))
    derived = {}
    for table, rows in (("streams", streams_), ("relations", relations), ("placements", placements),
                        ("changes", changes), ("rollouts", rollouts), ("records", records)):
        if rows:
            con.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
        derived[table] = len(rows)
    return derived


def tombstone(path: Path, source_id: str, reason: str = "deleted") -> None:
    """Mark a source deleted: it is dropped now and never indexed or recalled again."""
    release_readers(path)
    forget_list(path)  # a list is never newer than the file it describes
    con = open_index(path, read_only=False)
    try:
        con.execute("INSERT OR REPLACE INTO tombstones VALUES (?, now(), ?)", [source_id, reason])
        for table in STRUCTURED_TABLES[:-2]:
            con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])
        crash_point("tombstone", 1)
        con.execute("CHECKPOINT")  # every row in the file, none left in a write-ahead log
    finally:
        con.close()
    crash_point("tombstone", 2)
    write_list(path)


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
    return (index_meta(path) or {}).get("fingerprint")



"""An index belongs to one case folder, is current or rebuilt, is built by one process at a
time, leaves nothing behind when its build dies, and stores no summary that mixes readerships."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml

from investigator.config import Settings
from investigator.runtime import Investigator
from state.errors import IndexMissing
from state.expected import load_expected
from tools.builds import build_lock
from tools.index import index_fingerprint, last_build

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


def _inv(ws: Path, embedder, index_root: Path | None = None, **kwargs) -> Investigator:
    kwargs.setdefault("progress", lambda _m: None)
    return Investigator(Settings(workspace=ws, index_root=index_root), embedder=embedder, **kwargs)


def _copy(dst: Path) -> Path:
    shutil.copytree(REFERENCE, dst)
    return dst


def _identity(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_size


def _edit_sources(case_dir: Path, source_id: str, **changes) -> None:
    path = case_dir / "sources.yaml"
    data = yaml.safe_load(path.read_text())
    entry = next(s for s in data["sources"] if s["id"] == source_id)
    entry.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_two_case_folders_with_the_same_id_get_their_own_indexes_and_a_rebuild_of_one_leaves_the_other_alone(
        tmp_path, embedder, index_root):
    a, b = _copy(tmp_path / "a"), _copy(tmp_path / "b")
    inv = _inv(tmp_path / "ws", embedder, index_root)  # the session's shared index root holds the reference's
    case = inv.validate(a)
    first, second = inv.index(a), inv.index(b)
    pa, pb, ref = inv.index_path(case, a), inv.index_path(case, b), inv.index_path(case, REFERENCE)
    assert len({pa, pb, ref}) == 3 and pa.parent.parent == pb.parent.parent == ref.parent.parent == index_root
    assert pa.parent.name.startswith(f"{case.id}-") and pb.parent.name.startswith(f"{case.id}-"), \
        "a person can tell whose index a folder is"
    assert first is not None and second is not None and first.embedded == second.embedded == 0, \
        "a copy gets its own index, built with the vectors already computed for the same texts"
    before = _identity(pa), index_fingerprint(pa)

    runbook = b / "sources" / "runbooks" / "order-service-runbook-v1.md"
    runbook.write_text(runbook.read_text() + "\nA line only the second folder has.\n")
    assert inv.index(b).embedded == 1, "the edited folder's index is rebuilt (one chunk changed)"
    assert inv.index(b, force=True) is not None
    assert (_identity(pa), index_fingerprint(pa)) == before, "the other folder's index is untouched"
    assert inv.index(a) is None, "and still current"
    assert index_fingerprint(pa) != index_fingerprint(pb)


def test_a_build_reports_how_long_each_stage_took_and_the_stages_add_up_to_no_more_than_the_build(
        tmp_path, embedder, index_root):
    case_dir = _copy(tmp_path / "case")
    said: list[str] = []
    inv = _inv(tmp_path / "ws", embedder, index_root, progress=said.append)
    started = time.perf_counter()
    info = inv.index(case_dir)
    wall = time.perf_counter() - started
    assert info is not None
    assert set(info.stages) == {"parse", "chunk", "embed", "write", "entities", "verify"}
    assert all(t.wall >= 0 and t.cpu >= 0 for t in info.stages.values())
    assert sum(t.wall for t in info.stages.values()) <= info.seconds + 0.001 * len(info.stages), \
        "stages never overlap (each rounded to the millisecond)"
    assert info.seconds <= wall, "the build's time, parsing included, is within what the caller waited"
    assert last_build(inv.index_path(inv.validate(case_dir), case_dir)) == info, "recorded next to the index"
    closing = next(line for line in said if line.startswith("index built:"))
    assert all(f"{name} " in closing for name in info.stages), closing


def test_an_index_is_stale_when_the_manifest_moves_a_source_to_another_environment_but_not_when_only_its_groups_change(
        tmp_path, embedder, index_root):
    case_dir = _copy(tmp_path / "case")
    inv = _inv(tmp_path / "ws", embedder, index_root)
    inv.index(case_dir)
    log = "order-service-prod-log-20260429"
    _edit_sources(case_dir, log, groups=["sre-oncall"])
    assert inv.index(case_dir) is None, "access is read from the manifest at query time, not from the index"
    _edit_sources(case_dir, log, environment="staging")
    rebuilt = inv.index(case_dir)
    assert rebuilt is not None and rebuilt.embedded == 0
    con = duckdb.connect(str(inv.index_path(inv.validate(case_dir), case_dir)), read_only=True)
    try:
        envs = {r[0] for r in con.execute(
            "SELECT DISTINCT environment FROM chunks WHERE source_id = ?", [log]).fetchall()}
    finally:
        con.close()
    assert envs == {"staging"}, "the chunks carry the environment the manifest says now"


def test_what_dead_builds_left_is_removed_by_the_next_index_and_a_live_build_keeps_its_files(tmp_path, embedder):
    inv = _inv(tmp_path / "ws", embedder)
    inv.index(REFERENCE)
    folder = inv.index_path(inv.validate(REFERENCE), REFERENCE).parent
    dead, alive = _dead_pid(), os.getppid()
    secret = "the root cause sits in a restricted note"
    left = [folder / f".build-{dead}-0badc0de.duckdb", folder / f".build-{dead}-0badc0de.duckdb.wal",
            folder / f".graph.building-{dead}-0badc0de", folder / f".graph.old-{dead}-0badc0de",
            folder / ".graph.building-0badc0de"]  # named before builds carried their process id
    for p in left:
        if p.suffix in (".duckdb", ".wal"):
            p.write_text(secret)
        else:
            p.mkdir()
            (p / "community_reports.parquet").write_text(secret)
    live = folder / f".graph.building-{alive}-0badc0de"
    live.mkdir()
    messages: list[str] = []
    assert _inv(tmp_path / "ws", embedder, progress=messages.append).index(REFERENCE) is None
    assert not [p for p in left if p.exists()], "nothing of a dead build is left, restricted text included"
    assert live.exists(), "a build whose process is alive is not disturbed"
    assert any("removed what killed builds left" in m for m in messages)


def test_an_index_that_cannot_be_read_stops_with_a_clear_error_instead_of_forgetting_its_deletions(tmp_path, embedder):
    inv = _inv(tmp_path / "ws", embedder)
    path = inv.index_path(inv.validate(REFERENCE), REFERENCE)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(IndexMissing, match="cannot be read"):
        inv.index(REFERENCE)


def test_a_second_process_waits_for_the_build_lock_saying_so_and_then_uses_the_index_built(tmp_path, embedder):
    inv = _inv(tmp_path / "ws", embedder)
    inv.index(REFERENCE)
    folder = inv.index_path(inv.validate(REFERENCE), REFERENCE).parent
    env = {k: v for k, v in os.environ.items() if k not in ("INVESTIGATOR_CRASH_AT", "INVESTIGATOR_INDEX_ROOT")}
    err = tmp_path / "stderr"
    with build_lock(folder, what="the index"):
        with err.open("w") as stream:
            proc = subprocess.Popen([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "ws"),
                                     "index", str(REFERENCE), "--tool", "basic"],
                                    stdout=subprocess.PIPE, stderr=stream, text=True, cwd=ROOT, env=env)
        deadline = time.monotonic() + 300
        while "waiting for" not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, "it does not go ahead while the lock is held"
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.read_text()
    assert f"waiting for process {os.getpid()}, which is building the index" in err.read_text()
    assert "basic index is up to date" in out


_OPEN_STORE = """
import sys, time
from pathlib import Path
from state.store import Store
print("ready", flush=True)
while not Path(sys.argv[2]).exists():
    time.sleep(0.001)
Store.from_url("sqlite:///" + sys.argv[1])
"""


def test_processes_creating_a_fresh_store_at_the_same_moment_all_get_it(tmp_path):
    """Two first runs create the workspace's store at once: the one that finds a table made
    meanwhile checks again instead of failing with "table already exists"."""
    for attempt in range(2):
        db, go = tmp_path / f"store{attempt}.db", tmp_path / f"go{attempt}"
        procs = [subprocess.Popen([sys.executable, "-c", _OPEN_STORE, str(db), str(go)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        go.touch()
        for p in procs:
            _out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.strip().splitlines()[-3:]


@pytest.mark.slow
def test_two_first_runs_on_a_fresh_workspace_share_one_build_and_reach_the_same_verdicts(tmp_path):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("INVESTIGATOR_CRASH_AT", "INVESTIGATOR_INDEX_ROOT")}
    procs = []
    for name in ("a", "b"):
        stream = (tmp_path / f"{name}.err").open("w")
        procs.append((name, stream, subprocess.Popen(
            [sys.executable, "-m", "investigator.cli", "--home", str(home), "run", str(REFERENCE),
             "--retrieval", "graph", "--out", str(tmp_path / name)],
            stdout=subprocess.DEVNULL, stderr=stream, cwd=ROOT, env=env)))
    for name, stream, proc in procs:
        assert proc.wait(timeout=900) == 0, (tmp_path / f"{name}.err").read_text()
        stream.close()
    logs = "".join((tmp_path / f"{n}.err").read_text() for n in ("a", "b"))
    assert logs.count("index built:") == 1 and logs.count("graph built:") == 1, "one process built, one used it"
    verdicts = [{c["id"]: c["verdict"] for c in json.loads((tmp_path / n / "report.json").read_text())["claims"]}
                for n in ("a", "b")]
    assert verdicts[0] == verdicts[1] == {cid: g.verdict for cid, g in load_expected(REFERENCE).claims.items()}


# stored graph summaries ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_graph(tmp_path_factory, embedder):
    ws = tmp_path_factory.mktemp("graph-ws")
    inv = _inv(ws, embedder)
    info = inv.index_graph(REFERENCE)
    case = inv.validate(REFERENCE)
    return inv, case, info, inv.index_path(case, REFERENCE), inv.graph_dir(case, REFERENCE)


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in str(text).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


@pytest.mark.slow
def test_every_stored_graph_summary_derives_from_units_of_one_readership(reference_graph):
    from tools.corpus import load_manifest
    from tools.graph import load_graph_tables, readerships

    info, index_path, graph_dir = reference_graph[2:]
    reader = readerships(load_manifest(REFERENCE).sources)
    con = duckdb.connect(str(index_path), read_only=True)
    try:
        source_of = dict(con.execute("SELECT chunk_id, source_id FROM chunks").fetchall())
    finally:
        con.close()
    t = load_graph_tables(graph_dir)
    unit_reader = {u: reader[source_of[d]] for u, d in zip(t.text_units["id"], t.text_units["document_id"])}
    unit_text = dict(zip(t.text_units["id"], t.text_units["text"]))
    texts_of: dict[str, list[str]] = {}
    for u, r in unit_reader.items():
        texts_of.setdefault(r, []).append(unit_text[u])
    assert len(texts_of) > 1 and info.reports_withheld > 0 and info.descriptions_withheld > 0, \
        "the case mixes readerships in communities and entities: the check below is not vacuous"

    units_of = dict(zip(t.communities["community"], t.communities["text_unit_ids"]))
    assert len(t.community_reports) > 0
    for rep in t.community_reports.itertuples():
        readers = {unit_reader[u] for u in units_of[rep.community]}
        assert len(readers) == 1, f"community {rep.community}'s report was written from {sorted(readers)}"
        (r,) = readers
        for line in _lines(rep.summary) + _lines(rep.full_content):
            assert any(line in text for text in texts_of[r]), f"{line!r} is not text of {r}"

    described = 0
    for ent in t.entities.itertuples():
        if not ent.description:
            continue
        described += 1
        readers = {unit_reader[u] for u in ent.text_unit_ids}
        assert len(readers) == 1, f"{ent.title}'s description is stored although it is named in {sorted(readers)}"
        (r,) = readers
        for line in _lines(ent.description):
            assert any(line in text for text in texts_of[r]), f"{ent.title}: {line!r} is not text of {r}"
    assert described > 0


@pytest.mark.slow
def test_a_graph_is_stale_once_a_source_changes_readership(reference_graph):
    from tools.corpus import load_manifest
    from tools.graph import graph_is_fresh, readerships

    inv, _case, _info, index_path, graph_dir = reference_graph
    reader = readerships(load_manifest(REFERENCE).sources)
    assert graph_is_fresh(index_path, graph_dir, inv.embedder, readerships=reader)
    moved = dict(reader, **{"order-service-runbook-v1": "prod: security"})
    assert not graph_is_fresh(index_path, graph_dir, inv.embedder, readerships=moved)


def test_a_new_case_that_shares_sources_with_an_indexed_one_embeds_only_what_is_new(tmp_path, embedder):
    first = _copy(tmp_path / "first")
    second = _copy(tmp_path / "second")
    case_file = second / "case.yaml"  # another incident of the same system: its own id, the same runbooks
    case_file.write_text(case_file.read_text().replace("ALR-20260429-017", "ALR-20260430-002"))
    runbook = second / "sources" / "runbooks" / "order-service-runbook-v1.md"
    runbook.write_text(runbook.read_text() + "\nA line only the second incident's folder has.\n")
    inv = _inv(tmp_path / "ws", embedder, tmp_path / "indexes")
    assert inv.validate(second).id == "ALR-20260430-002"
    built = inv.index(first)
    assert built is not None and built.embedded > 1
    again = inv.index(second)
    assert again is not None and again.embedded == 1, "only the changed chunk is embedded; the rest is reused"
    pa, pb = inv.index_path(inv.validate(first), first), inv.index_path(inv.validate(second), second)
    with duckdb.connect(str(pa), read_only=True) as a, duckdb.connect(str(pb), read_only=True) as b:
        va = dict(a.execute("SELECT text, vec FROM chunks").fetchall())
        vb = dict(b.execute("SELECT text, vec FROM chunks").fetchall())
    shared = set(va) & set(vb)
    assert len(shared) >= built.embedded - 1 and all(va[t] == vb[t] for t in shared)

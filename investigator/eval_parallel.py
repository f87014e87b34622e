"""`eval --jobs N`: the same scoring as `investigator.evaluate.evaluate`, one case per worker
process (each loads the embedding model once); a worker that dies in native code costs only the case
it ran, which is recorded as an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from investigator.evaluate import CaseScore, case_line, error_score, evaluate, finished_counter
from state.expected import load_expected


_WORKER: dict[str, Any] = {}


def _init_worker(home: str, index_root: str = "") -> None:
    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tools.embedding import MiniLMEmbedder

    embedder = MiniLMEmbedder()

    def make(ws: Path, progress: Callable[[str], None]) -> object:
        return Investigator(Settings(workspace=ws), embedder=embedder, progress=progress)

    _WORKER["make"] = make
    _WORKER["home"] = home
    _WORKER["index_root"] = index_root


def _one(case_dir: str, tools: tuple[str, ...]) -> list[dict]:
    root = _WORKER.get("index_root")
    return [s.model_dump() for s in evaluate([Path(case_dir)], list(tools), _WORKER["make"],
                                             index_root=Path(root) if root else None)]


def evaluate_parallel(cases: list[Path], tools: list[str], jobs: int,
                      progress: Callable[[str], None] = lambda _m: None,
                      index_root: Path | None = None) -> list[CaseScore]:
    """The same as `evaluate`, one case per worker process (each loads the embedding model once)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from concurrent.futures.process import BrokenProcessPool

    scores: dict[str, list[CaseScore]] = {}
    todo = list(cases)
    finished = finished_counter(progress, len(cases) * len(tools))
    while todo:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=("", str(index_root or ""))) as pool:
            futures = {pool.submit(_one, str(c), tuple(tools)): c for c in todo}
            broken = False
            for fut in as_completed(futures):
                c = futures[fut]
                try:
                    got = [CaseScore.model_validate(d) for d in fut.result()]
                except BrokenProcessPool:
                    broken = True
                    continue
                scores[str(c)] = got
                _report(got, finished)
        left = [c for c in todo if str(c) not in scores]
        if broken and left:
            # a worker process died (a native crash): the case it ran is recorded as an error, the rest go on
            lost = left[0] if len(left) == 1 else None
            if lost is None:
                # unknown which case killed it: run the rest one by one to find it
                for c in left:
                    try:
                        with ProcessPoolExecutor(max_workers=1, initializer=_init_worker, initargs=("", str(index_root or ""))) as one:
                            got = [CaseScore.model_validate(d) for d in one.submit(_one, str(c), tuple(tools)).result()]
                    except BrokenProcessPool:
                        got = [_crashed(c, t) for t in tools]
                    scores[str(c)] = got
                    _report(got, finished)
            else:
                scores[str(lost)] = [_crashed(lost, t) for t in tools]
                _report(scores[str(lost)], finished)
        todo = [c for c in todo if str(c) not in scores]
    return [s for c in cases for s in scores.get(str(c), [])]


def _crashed(case_dir: Path, tool: str) -> CaseScore:
    expected = load_expected(case_dir)
    assert expected is not None
    return error_score(case_dir.name, tool, expected, "the worker process died (native crash)")


def _report(got: list[CaseScore], progress: Callable[[str], None]) -> None:
    for s in got:
        progress(case_line(s))


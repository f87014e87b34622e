"""Shared fixtures: one real embedding model and one reference index per test session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


@pytest.fixture(scope="session")
def embedder():
    from tools.embedding import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def index_root(tmp_path_factory, embedder) -> Path:
    """The reference case indexed once; tests that change sources copy the case instead."""
    from investigator.config import Settings
    from investigator.runtime import Investigator

    root = tmp_path_factory.mktemp("indexes")
    Investigator(Settings(workspace=root / "ws", index_root=root), embedder=embedder,
                 progress=lambda _m: None).index(REFERENCE)
    return root


@pytest.fixture
def make_investigator(tmp_path, embedder, index_root):
    """An Investigator with its own store and checkpoints, sharing the session's indexes."""
    from investigator.config import Settings
    from investigator.runtime import Investigator

    def make(workspace: Path | None = None, shared_index: bool = True, **kwargs):
        ws = workspace or tmp_path / "ws"
        settings = Settings(workspace=ws, index_root=index_root if shared_index else None)
        kwargs.setdefault("progress", lambda _m: None)
        return Investigator(settings, embedder=embedder, **kwargs)

    return make


@pytest.fixture
def case_copy(tmp_path) -> Path:
    """A private copy of the reference case that a test may edit."""
    dst = tmp_path / "case"
    shutil.copytree(REFERENCE, dst)
    return dst


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory, embedder, index_root):
    """One uninterrupted basic run of the reference case, shared by read-only tests."""
    from investigator.config import Settings
    from investigator.runtime import Investigator

    ws = tmp_path_factory.mktemp("refrun")
    inv = Investigator(Settings(workspace=ws, index_root=index_root), embedder=embedder, progress=lambda _m: None)
    result = inv.start(REFERENCE)
    out = ws / "out"
    inv.write(result.run_id, out)
    return inv, result, out


@pytest.fixture
def pg_url():
    """A PostgreSQL database of its own on 127.0.0.1:5432, dropped afterwards (skipped when no server answers)."""
    import uuid

    psycopg = pytest.importorskip("psycopg")
    try:
        admin = psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    name = f"inv_test_{uuid.uuid4().hex[:10]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

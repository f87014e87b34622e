"""A case is loaded once per drive (`tools.loaded.LoadedCase`) and passed down; only access asks
for the manifest again, as it is on disk now (`investigator.manifests.ManifestOnDisk`)."""

from __future__ import annotations

import os

import pytest
import yaml

from investigator import loading, manifests
from investigator.manifests import ManifestOnDisk

from conftest import REFERENCE


@pytest.mark.parametrize("retrieval", ["basic", "graph"])
def test_a_run_merges_the_profile_and_parses_the_sources_once(make_investigator, monkeypatch, retrieval):
    calls = {"parse_context": 0, "load_all_sources": 0}

    def counted(name):
        real = getattr(loading, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for name in calls:
        monkeypatch.setattr(loading, name, counted(name))
    make_investigator().start(REFERENCE, retrieval=retrieval)
    assert calls == {"parse_context": 1, "load_all_sources": 1}


def test_the_manifest_of_now_is_parsed_again_only_when_the_file_changed(case_copy, monkeypatch):
    parsed: list[object] = []
    real = manifests.load_manifest
    monkeypatch.setattr(manifests, "load_manifest", lambda d: parsed.append(d) or real(d))
    now = ManifestOnDisk(case_copy)
    first = now.current()
    assert now.current() is first and len(parsed) == 1, "unchanged: the manifest parsed before"

    path = case_copy / "sources.yaml"
    data = yaml.safe_load(path.read_text())
    data["sources"][0]["groups"] = ["nobody"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a write within the clock's tick
    assert now.current().sources[0].groups == ("nobody",) and len(parsed) == 2

"""The incident generator: seeded cases in the documented format, with gold answers that follow from the docs."""

from __future__ import annotations

import collections
import hashlib
from pathlib import Path

import pytest
import yaml

from investigator.generator import CAUSES, RED_HERRINGS, generate
from investigator.generator.check import (
    ROOT_KINDS,
    STOPS,
    VERDICTS,
    load,
    readable,
    signal_problems,
    structure_problems,
    variant_problems,
)

SEED, COUNT = 1, 60

# the telemetry, change, config, Kubernetes and record formats of docs/case-format.md, as the generator tags them
ALL_FORMATS = {
    "log/plain", "log/plain-nozone", "log/plain-bracket", "log/postgres", "log/logfmt", "log/zap", "log/logrus",
    "log/pino", "log/bunyan", "log/syslog5424", "log/syslog3164", "log/multiline", "log/malformed",
    "trace/otlp", "trace/jaeger", "metric/csv", "metric/prometheus",
    "k8s/events", "k8s/pods", "k8s/pods-wide", "k8s/describe",
    "change/record-diff", "change/record-nodiff", "change/helm", "change/argocd", "change/rollout", "change/flags",
    "config/record", "config/yaml", "config/json", "config/env", "config/properties", "config/configmap", "config/snapshot",
    "record/catalog", "record/mapping", "record/ownership", "prose/runbook", "prose/postmortem", "prose/note", "prose/doc",
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[Path]:
    return generate(SEED, COUNT, tmp_path_factory.mktemp("gen"))


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_same_seed_and_count_give_byte_identical_cases(tmp_path):
    a = generate(11, 4, tmp_path / "a")
    b = generate(11, 4, tmp_path / "b")
    assert [p.name for p in a] == [p.name for p in b]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")


def test_another_seed_gives_other_cases(tmp_path):
    generate(11, 2, tmp_path / "a")
    generate(12, 2, tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "b")


def test_a_forced_variant_writes_every_case_as_that_variant_with_its_hop_in_each_kind_of_prose(tmp_path):
    """`--variant hop_in_prose`: every case's decisive hop is written only in prose, and the prose is a
    runbook, design notes or a chat export (a Slack array) across the cases; each rests on its files."""
    paths = generate(5, 9, tmp_path, variant="hop_in_prose")
    kinds = set()
    for case in paths:
        expected = yaml.safe_load((case / "expected.yaml").read_text())
        manifest = {e["id"]: e for e in yaml.safe_load((case / "sources.yaml").read_text())["sources"]}
        assert "variant: hop_in_prose;" in (case / "expected.yaml").read_text().splitlines()[1], case.name
        assert structure_problems(case) == [] and variant_problems(case) == [], case.name
        hops = [h for c in expected["claims"].values() for h in (c.get("bridge_path") or [])]
        kinds |= {(manifest[h["source"]]["kind"], manifest[h["source"]].get("format")) for h in hops
                  if manifest[h["source"]]["kind"] in ("runbook", "doc", "note")}
    assert kinds == {("runbook", "markdown"), ("doc", "markdown"), ("note", "chat")}


def test_an_unknown_variant_is_refused_naming_the_known_ones(tmp_path):
    from state.errors import ConfigError

    with pytest.raises(ConfigError, match="hop_in_prose"):
        generate(5, 1, tmp_path, variant="hop_in_poetry")
    assert not any(tmp_path.iterdir())


def test_every_case_follows_the_case_format(cases):
    """Documented files, manifest paths inside the folder, parsable files, exact gold quotes, vocabularies, canaries."""
    problems = {c.name: structure_problems(c) for c in cases}
    assert {k: v for k, v in problems.items() if v} == {}


def test_expected_answers_use_the_documented_vocabularies(cases):
    for c in cases:
        case, _manifest, exp = load(c)
        assert exp["format"] == "investigator/expected@1"
        assert exp["stop_reason"] in STOPS
        assert all(cl["verdict"] in VERDICTS for cl in exp["claims"].values())
        rc = exp.get("root_cause")
        causal = next(cl["id"] for cl in case["required_claims"] if cl["kind"] == "causal_chain")
        if exp["claims"][causal]["verdict"] == "confirmed":
            assert rc is not None and rc["kind"] in ROOT_KINDS and rc["path"][0] == case["subject"].split("/")[1]
            assert "change" in rc
        if exp["claims"][causal]["verdict"] == "insufficient":
            assert rc is None
        if exp["stop_reason"] != "evidence_ready":
            assert exp["claims"][causal]["verdict"] != "confirmed"


def test_canaries_appear_only_in_unreadable_sources(cases):
    seen = 0
    for c in cases:
        case, manifest, exp = load(c)
        for canary in exp["canaries"]:
            holders = [e for e in manifest if canary in (c / e["path"]).read_text()]
            assert holders and not any(readable(e, case) for e in holders)
            seen += 1
    assert seen > 0


def test_intended_anomalies_and_normals_are_unambiguous_in_the_written_telemetry(cases):
    """Re-derived from the files with deciding.md §3/§4: onsets in order, rises that explain, nothing else moves."""
    problems = {c.name: signal_problems(c) for c in cases}
    assert {k: v for k, v in problems.items() if v} == {}


def test_each_variant_rests_on_what_the_files_hold(cases):
    """Every hop quoted from a readable source; a missing relation or telemetry is missing everywhere."""
    problems = {c.name: variant_problems(c) for c in cases}
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_mix_covers_causes_formats_languages_red_herrings_and_verdicts(cases):
    meta = [yaml.safe_load((c / "expected.yaml").read_text()) for c in cases]
    gens = [m["generator"] for m in meta]
    assert {g["cause_kind"] for g in gens} == set(CAUSES)
    assert ALL_FORMATS <= {f for g in gens for f in g["formats"]}
    assert {"en", "zh"} <= {lang for g in gens for lang in g["languages"]}
    assert set(RED_HERRINGS) <= {r for g in gens for r in g["red_herrings"]}
    causal = collections.Counter(g["causal_verdict"] for g in gens)
    assert set(causal) == {"confirmed", "inferred", "insufficient"}
    assert {m["stop_reason"] for m in meta} >= {"evidence_ready", "permission_denied"} or \
        {m["stop_reason"] for m in meta} >= {"evidence_ready", "awaiting_permission"}
    assert {g["depth"] for g in gens} == {1, 2, 3, 4, 5}
    kinds = {m["root_cause"]["kind"] for m in meta if "kind" in m.get("root_cause", {})}
    assert kinds >= {"config_push", "deployment", "feature_flag", "certificate", "dns", "noisy_neighbour", "capacity"}


def test_topologies_span_small_and_large(cases):
    sizes = [yaml.safe_load((c / "expected.yaml").read_text())["generator"]["services"] for c in cases]
    assert 5 <= min(sizes) <= 12 and 40 <= max(sizes) <= 60


def test_output_does_not_depend_on_the_interpreters_hash_seed(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    for hs in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hs, PYTHONPATH=str(root))
        subprocess.run([sys.executable, "-m", "investigator.generator", "--seed", "3", "--count", "3",
                        "--out", str(tmp_path / hs), "--quiet"], check=True, env=env, capture_output=True)
    assert _digest(tmp_path / "1") == _digest(tmp_path / "4242")

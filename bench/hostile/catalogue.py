"""A catalogue of hostile and careless inputs, and a runner that sorts what `investigator` did with each.

Every entry starts from a private copy of the reference case (cases/ALR-20260429-017) in a
sandbox two folders deep (`<root>/a/b/work/case`, the CLI runs in `work/`), applies one change
(to case.yaml, sources.yaml, a source file, the environment or the command line) and runs the
CLI in this process. The outcome is one of:

- refused: exit 2 (or 3 for an unknown run), one `error:` line naming the file and the field
  (or the argument / environment variable) and what was expected — or several such lines when
  every problem is reported at once (init's front-matter check);
- refused-unclear: a non-zero exit whose message is not that one line;
- traceback: an exception escaped `main()`;
- hung: still running after `TIMEOUT` seconds (stopped by an alarm);
- accepted: exit 0.

Besides: `partial` when a refused command left anything written under the sandbox root (a name
that climbs out with `../../` still lands there), `wrote` when an accepted `validate` wrote
anything, `leak` when a canary planted in a source the principal cannot read shows in the output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
SECURITY_NOTE = "sources/notes/order-service-security-review-2026q2.md"  # groups: [security]
WIKI_PAGE = "sources/notes/wiki-order-service-latency-tips.md"  # trust: untrusted
ONE_LINE = re.compile(r"^error: (?P<file>.+?): (?P<field>[^:]+?): (?P<expected>.+)$")
ARG_LINE = re.compile(r"^error: (?P<arg>--[a-z-]+|RUN_ID|INVESTIGATOR_[A-Z_]+): (?P<expected>.+)$")
ARGPARSE = re.compile(r"error: argument (?P<arg>\S+)")
NO_RUN = re.compile(r"^error: no run '[^']+' in the store( \(the store [^)]* does not exist\))?$")  # RunNotFound, exit 3


@dataclass
class Entry:
    id: str
    area: str  # case.yaml | sources.yaml | source file | CLI/env | init
    what: str
    setup: Callable[[Path, Path], None] = lambda case, work: None
    argv: list[str] = field(default_factory=lambda: ["validate", "case"])
    expect: str = "refuse"  # refuse | accept
    why: str = ""  # why acceptance is right (for expect=accept)
    env: dict[str, str] = field(default_factory=dict)
    may_write: tuple[str, ...] = ()  # paths under work/ an accepted command may write


@dataclass
class Outcome:
    entry: Entry
    code: int | None
    stderr: str
    kind: str  # refused | refused-unclear | traceback | hung | accepted
    partial: bool = False
    wrote: bool = False
    leak: bool = False

    @property
    def as_expected(self) -> bool:
        ok = self.kind == "refused" if self.entry.expect == "refuse" else self.kind == "accepted"
        return ok and not (self.partial or self.wrote or self.leak)


# --- setups ----------------------------------------------------------------------------------

def _yaml_edit(name: str, change: Callable[[dict], None]) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        p = case / name
        data = yaml.safe_load(p.read_text())
        change(data)
        p.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return apply


def C(change: Callable[[dict], None]) -> Callable[[Path, Path], None]:  # noqa: N802 - case.yaml
    return _yaml_edit("case.yaml", change)


def S(change: Callable[[dict], None]) -> Callable[[Path, Path], None]:  # noqa: N802 - sources.yaml
    return _yaml_edit("sources.yaml", change)


def text(name: str, mod: Callable[[str], str]) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        p = case / name
        p.write_text(mod(p.read_text()))
    return apply


def raw(name: str, content: str | bytes) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        p = case / name
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
    return apply


def add(entry: dict, files: dict[str, str | bytes]) -> Callable[[Path, Path], None]:
    """A new source: files written, an entry appended to the manifest (groups default sre-oncall)."""
    def apply(case: Path, work: Path) -> None:
        for rel, content in files.items():
            p = case / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
        S(lambda m: m["sources"].append({"groups": ["sre-oncall"], **entry}))(case, work)
    return apply


def fin(kind: str, fmt: str, name: str, content: str, **extra: str) -> Callable[[Path, Path], None]:
    """A finance-only source (the principal holds sre-oncall only)."""
    files = {f"sources/fin/{name}": content, **{f"sources/fin/{k}": v for k, v in extra.items()}}
    return add({"id": "fin-" + re.sub(r"[^A-Za-z0-9]+", "-", name), "path": f"sources/fin/{name}", "kind": kind,
                "format": fmt, "groups": ["finance"]}, files)


def both(*steps: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        for s in steps:
            s(case, work)
    return apply


def sparse(rel: str, size: int) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        p = case / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("wb") as fh:
            fh.truncate(size)
    return apply


def symlink(rel: str, target: Callable[[Path, Path], Path]) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        (case / rel).symlink_to(target(case, work))
    return apply


def fifo(rel: str) -> Callable[[Path, Path], None]:
    def apply(case: Path, work: Path) -> None:
        os.mkfifo(case / rel)
    return apply


def append(name: str, extra: str) -> Callable[[Path, Path], None]:
    return text(name, lambda t: t + "\n" + extra + "\n")


def first_source(**update: object) -> Callable[[Path, Path], None]:
    return S(lambda m: m["sources"][0].update(update))


BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
NOTE = "---\ndoc_id: n\ntitle: N\nversion: v1\nupdated_at: 2026-04-20T09:00:00+08:00\n---\nA note.\n"
ALERT = {"version": "4", "status": "firing", "alerts": [{
    "status": "firing", "labels": {"alertname": "HighLatency", "environment": "prod", "service": "order-service"},
    "annotations": {"summary": "p95 high"}, "startsAt": "2026-04-29T02:41:00Z", "endsAt": "0001-01-01T00:00:00Z"}]}


def alert(data: object | bytes | str, material: Callable[[Path], None] | None = None) -> Callable[[Path, Path], None]:
    """`init` input: alert.json and a material folder (a copy of the reference case's sources)."""
    def apply(case: Path, work: Path) -> None:
        p = work / "alert.json"
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data if isinstance(data, str) else json.dumps(data))
        shutil.copytree(case / "sources", work / "material")
        if material:
            material(work / "material")
    return apply


def alert_with(**labels: str) -> dict:
    a = json.loads(json.dumps(ALERT))
    a["alerts"][0]["labels"].update(labels)
    return a


INIT = ["init", "--alert", "alert.json", "--sources", "material", "--out", "new-case"]
C_ = "case.yaml"
S_ = "sources.yaml"
F_ = "source file"
X_ = "CLI/env"
I_ = "init"

CATALOGUE: list[Entry] = [
    # --- case.yaml: structure and YAML ------------------------------------------------------
    Entry("c-syntax", C_, "not YAML (an unclosed bracket)", raw("case.yaml", "format: [investigator/case@1\n")),
    Entry("c-empty", C_, "an empty file", raw("case.yaml", "")),
    Entry("c-list", C_, "a list at the top", raw("case.yaml", "- format: investigator/case@1\n")),
    Entry("c-scalar", C_, "a scalar at the top", raw("case.yaml", "just words\n")),
    Entry("c-no-format", C_, "format missing", C(lambda c: c.pop("format"))),
    Entry("c-format-v2", C_, "format investigator/case@2", C(lambda c: c.update(format="investigator/case@2"))),
    Entry("c-typo", C_, "an unknown field (budget for budgets)", C(lambda c: c.update(budget={"rounds": 3}))),
    Entry("c-dup-top", C_, "a top-level key written twice", append("case.yaml", "question: again")),
    Entry("c-dup-nested", C_, "window.start written twice",
          text("case.yaml", lambda t: t.replace("window:\n", "window:\n  start: 2026-04-29T10:00:00+08:00\n", 1))),
    Entry("c-bomb", C_, "an alias bomb (10^9 values)", append("case.yaml", "profile:\n  " + BOMB.replace("\n", "\n  "))),
    Entry("c-recursive", C_, "a recursive alias", append("case.yaml", "profile: &r {severity: *r}")),
    Entry("c-deep", C_, "1,000 nested lists", append("case.yaml", "x: " + "[" * 1000 + "]" * 1000)),
    Entry("c-5mb", C_, "a 5 MB case.yaml", append("case.yaml", "# " + "x" * (5 * 1024 * 1024))),
    Entry("c-binary", C_, "case.yaml not UTF-8", raw("case.yaml", b"format: \xff\xfe\n")),
    Entry("c-dir", C_, "case.yaml is a folder", lambda case, work: ((case / "case.yaml").unlink(),
                                                                   (case / "case.yaml").mkdir())),
    Entry("c-missing", C_, "no case.yaml", lambda case, work: (case / "case.yaml").unlink()),
    Entry("c-python-tag", C_, "a !!python/object/apply tag", append("case.yaml", "x: !!python/object/apply:os.system [id]")),
    Entry("c-bigint", C_, "an integer of 5,000 digits", append("case.yaml", "x: " + "9" * 5000)),
    Entry("c-bad-date", C_, "a YAML timestamp that is no date (2026-13-45)",
          text("case.yaml", lambda t: re.sub(r"fired_at: .*", "fired_at: 2026-13-45T10:00:00Z", t, count=1))),
    # --- case.yaml: names ----------------------------------------------------------------------
    Entry("c-id-dotdot", C_, "id ../../../x", C(lambda c: c.update(id="../../../x"))),
    Entry("c-id-abs", C_, "id /tmp/x", C(lambda c: c.update(id="/tmp/x"))),
    Entry("c-id-slash", C_, "id a/b", C(lambda c: c.update(id="a/b"))),
    Entry("c-id-dot", C_, "id .hidden", C(lambda c: c.update(id=".hidden"))),
    Entry("c-id-long", C_, "id of 200 characters", C(lambda c: c.update(id="x" * 200))),
    Entry("c-id-empty", C_, "id empty", C(lambda c: c.update(id=""))),
    Entry("c-id-int", C_, "id 17 (a number)", C(lambda c: c.update(id=17))),
    Entry("c-id-index", C_, "id ../../../x, then `index`", C(lambda c: c.update(id="../../../x")),
          argv=["--home", "home", "index", "case", "--tool", "basic"]),
    Entry("c-run-id", C_, "run_id ../x", C(lambda c: c.update(run_id="../x"))),
    Entry("c-claim-id", C_, "a claim id ../x", C(lambda c: c["required_claims"][0].update(id="../x"))),
    # --- case.yaml: values -------------------------------------------------------------------
    Entry("c-subject", C_, "subject without env/", C(lambda c: c.update(subject="order-service"))),
    Entry("c-subject-empty", C_, "subject prod/", C(lambda c: c.update(subject="prod/"))),
    Entry("c-naive-time", C_, "window.start without an offset",
          C(lambda c: c["window"].update(start="2026-04-29T10:35:00"))),
    Entry("c-end-before", C_, "window.end before start", C(lambda c: c["window"].update(end="2026-04-29T10:00:00+08:00"))),
    Entry("c-lookback-neg", C_, "change_lookback -1800", C(lambda c: c["window"].update(change_lookback=-1800))),
    Entry("c-lookback-negstr", C_, "change_lookback -30m", C(lambda c: c["window"].update(change_lookback="-30m"))),
    Entry("c-lookback-bool", C_, "change_lookback true", C(lambda c: c["window"].update(change_lookback=True))),
    Entry("c-lookback-8d", C_, "change_lookback 8d", C(lambda c: c["window"].update(change_lookback="8d"))),
    Entry("c-baseline-0", C_, "baseline 0", C(lambda c: c["window"].update(baseline=0))),
    Entry("c-baseline-0m", C_, "baseline 0m", C(lambda c: c["window"].update(baseline="0m"))),
    Entry("c-baseline-huge", C_, "baseline 10^30 seconds", C(lambda c: c["window"].update(baseline=10**30))),
    Entry("c-baseline-hugestr", C_, "baseline 99999999999999999999d",
          C(lambda c: c["window"].update(baseline="99999999999999999999d"))),
    Entry("c-lead", C_, "onset_lead 2h (longer than the baseline)", C(lambda c: c["window"].update(onset_lead="2h"))),
    Entry("c-lead-default", C_, "baseline 5m (shorter than the default 10m onset_lead)",
          C(lambda c: c["window"].update(baseline="5m"))),
    Entry("c-tolerance", C_, "onset_tolerance 2h", C(lambda c: c["window"].update(onset_tolerance="2h"))),
    Entry("c-rounds-bool", C_, "budgets.rounds true", C(lambda c: c["budgets"].update(rounds=True))),
    Entry("c-rounds-str", C_, 'budgets.rounds "30"', C(lambda c: c["budgets"].update(rounds="30"))),
    Entry("c-rounds-float", C_, "budgets.rounds 3.0", C(lambda c: c["budgets"].update(rounds=3.0))),
    Entry("c-rounds-0", C_, "budgets.rounds 0", C(lambda c: c["budgets"].update(rounds=0))),
    Entry("c-rounds-huge", C_, "budgets.rounds 10^12", C(lambda c: c["budgets"].update(rounds=10**12))),
    Entry("c-reads-neg", C_, "budgets.reads -1", C(lambda c: c["budgets"].update(reads=-1))),
    Entry("c-rpr", C_, "budgets.reads_per_round 51", C(lambda c: c["budgets"].update(reads_per_round=51))),
    Entry("c-groups-empty", C_, "principal.groups []", C(lambda c: c["principal"].update(groups=[]))),
    Entry("c-may-yes", C_, 'principal.may_request_access "yes"',
          C(lambda c: c["principal"].update(may_request_access="yes"))),
    Entry("c-may-1", C_, "principal.may_request_access 1", C(lambda c: c["principal"].update(may_request_access=1))),
    Entry("c-no-principal", C_, "principal missing", C(lambda c: c.pop("principal"))),
    Entry("c-claims-empty", C_, "required_claims []", C(lambda c: c.update(required_claims=[]))),
    Entry("c-claims-missing", C_, "required_claims missing", C(lambda c: c.pop("required_claims"))),
    Entry("c-claim-kind", C_, "a claim of kind vibes", C(lambda c: c["required_claims"][0].update(kind="vibes"))),
    Entry("c-claim-dup", C_, "a claim id twice", C(lambda c: c["required_claims"].append(dict(c["required_claims"][0])))),
    Entry("c-ratio-1", C_, "min_ratio 1", C(lambda c: c["required_claims"][0].update(min_ratio=1))),
    Entry("c-ratio-inf", C_, "min_ratio .inf", C(lambda c: c["required_claims"][0].update(min_ratio=float("inf")))),
    Entry("c-ratio-nan", C_, "min_ratio .nan", C(lambda c: c["required_claims"][0].update(min_ratio=float("nan")))),
    Entry("c-ratio-str", C_, 'min_ratio "3"', C(lambda c: c["required_claims"][0].update(min_ratio="3"))),
    Entry("c-shift-nometric", C_, "metric_shift without metric", C(lambda c: c["required_claims"][0].pop("metric"))),
    Entry("c-hops-0", C_, "max_hops 0", C(lambda c: c["required_claims"][3].update(max_hops=0))),
    Entry("c-hops-9", C_, "max_hops 9", C(lambda c: c["required_claims"][3].update(max_hops=9))),
    Entry("c-hops-bool", C_, "max_hops true", C(lambda c: c["required_claims"][3].update(max_hops=True))),
    Entry("c-competitor", C_, "a competitor that is no hypothesis",
          C(lambda c: c["required_claims"][3].update(competitors=["nope"]))),
    Entry("c-counter-ref", C_, "counter_evidence of an unknown hypothesis",
          C(lambda c: c["required_claims"][2].update(hypothesis="nope"))),
    Entry("c-hyp-dup", C_, "a hypothesis id twice", C(lambda c: c["hypotheses"].append(dict(c["hypotheses"][0])))),
    Entry("c-hyp-ratio", C_, "predicts.min_ratio -2", C(lambda c: c["hypotheses"][0]["predicts"].update(min_ratio=-2))),
    Entry("c-ev-dup", C_, "an initial evidence id twice",
          C(lambda c: c["initial_evidence"].append(dict(c["initial_evidence"][0])))),
    Entry("c-ev-claim", C_, "initial evidence naming no claim", C(lambda c: c["initial_evidence"][0].update(claim="nope"))),
    Entry("c-ev-trust", C_, "initial evidence trust: trusted", C(lambda c: c["initial_evidence"][0].update(trust="trusted"))),
    Entry("c-profile-key", C_, "an unknown profile key", C(lambda c: c.update(profile={"severityy": {}}))),
    Entry("c-profile-re", C_, "a profile pattern that does not compile",
          C(lambda c: c.update(profile={"version_patterns": ["(unclosed"]}))),
    Entry("c-profile-bool", C_, "profile anomaly.persist true", C(lambda c: c.update(profile={"anomaly": {"persist": True}}))),
    Entry("c-labels-int", C_, "alert.labels value 1", C(lambda c: c["alert"].update(labels={"severity": 1}))),
    Entry("c-fired-words", C_, "alert.fired_at yesterday", C(lambda c: c["alert"].update(fired_at="yesterday"))),
    # --- case.yaml: accepted, rightly -----------------------------------------------------------
    Entry("c-ok-unicode", C_, "a title and question in CJK with emoji",
          C(lambda c: c.update(title="订单服务 P95 延迟 🚨", question="为什么延迟上升？")), expect="accept",
          why="free text is free text"),
    Entry("c-ok-defaults", C_, "budgets, hypotheses-free claims and initial_evidence left out",
          C(lambda c: (c.pop("budgets"), c.pop("initial_evidence"))), expect="accept",
          why="documented defaults (docs/case-format.md §1)"),
    Entry("c-ok-no-run-id", C_, "run_id left out", C(lambda c: c.pop("run_id")), expect="accept",
          why="optional; the default is run-<id>"),
    Entry("c-ok-lookback-0", C_, "change_lookback 0", C(lambda c: c["window"].update(change_lookback=0)), expect="accept",
          why="0 is in the documented range 0..7d (only changes inside the window count)"),
    Entry("c-ok-old-fields", C_, "end_kinds / through_change from older cases",
          C(lambda c: c["required_claims"][3].update(end_kinds=["config_key"], through_change=True)), expect="accept",
          why="documented as accepted and ignored (docs/case-format.md §1.2)"),

    # --- sources.yaml ------------------------------------------------------------------------------
    Entry("s-dotdot", S_, "path ../../../../etc/passwd", first_source(path="../../../../etc/passwd")),
    Entry("s-abs", S_, "path /etc/passwd", first_source(path="/etc/passwd")),
    Entry("s-home", S_, "path ~/secrets.md", first_source(path="~/secrets.md")),
    Entry("s-drive", S_, "path C:/Windows/win.ini", first_source(path="C:/Windows/win.ini")),
    Entry("s-nul", S_, "path with a NUL byte", first_source(path="sources/\x00x.md")),
    Entry("s-long", S_, "path of 5,000 characters", first_source(path="a" * 5000)),
    Entry("s-symlink-out", S_, "a symlink to /etc/passwd",
          both(symlink("sources/notes/passwd.md", lambda c, w: Path("/etc/passwd")),
               S(lambda m: m["sources"].append({"id": "pw", "path": "sources/notes/passwd.md", "kind": "note",
                                                "groups": ["sre-oncall"]})))),
    Entry("s-symlink-dir-out", S_, "a folder symlinked out of the case",
          both(symlink("sources/ext", lambda c, w: w.parents[1]),
               S(lambda m: m["sources"].append({"id": "ext", "path": "sources/ext/x.md", "kind": "note",
                                                "groups": ["sre-oncall"]})))),
    Entry("s-symlink-loop", S_, "a loop of symlinks",
          both(symlink("sources/a.md", lambda c, w: c / "sources/b.md"), symlink("sources/b.md", lambda c, w: c / "sources/a.md"),
               S(lambda m: m["sources"].append({"id": "loop", "path": "sources/a.md", "kind": "note",
                                                "groups": ["sre-oncall"]})))),
    Entry("s-fifo", S_, "a named pipe as a source",
          both(fifo("sources/notes/pipe.md"), S(lambda m: m["sources"].append(
              {"id": "pipe", "path": "sources/notes/pipe.md", "kind": "note", "groups": ["sre-oncall"]})))),
    Entry("s-dir", S_, "path names a folder", first_source(path="sources/notes")),
    Entry("s-missing", S_, "path names no file", first_source(path="sources/notes/none.md")),
    Entry("s-dup-id", S_, "a source id twice", S(lambda m: m["sources"].append(dict(m["sources"][1])))),
    Entry("s-dup-path", S_, "a path twice (two ids)", S(lambda m: m["sources"].append({**m["sources"][1], "id": "again"}))),
    Entry("s-dup-path-dot", S_, "a path twice, once as ./path",
          S(lambda m: m["sources"].append({**m["sources"][1], "id": "again", "path": "./" + m["sources"][1]["path"]}))),
    Entry("s-kind", S_, "kind tweet", first_source(kind="tweet")),
    Entry("s-format", S_, "format helm for a log", S(lambda m: next(s for s in m["sources"] if s["kind"] == "log").update(
        format="helm"))),
    Entry("s-no-groups", S_, "groups missing", S(lambda m: m["sources"][0].pop("groups"))),
    Entry("s-groups-empty", S_, "groups []", first_source(groups=[])),
    Entry("s-trust", S_, "trust maybe", first_source(trust="maybe")),
    Entry("s-tz", S_, "timezone +8", first_source(timezone="+8")),
    Entry("s-captured", S_, "captured_at without an offset", first_source(captured_at="2026-04-29T10:55:00")),
    Entry("s-id-slash", S_, "a source id ../x", first_source(id="../x")),
    Entry("s-empty", S_, "sources []", S(lambda m: m.update(sources=[]))),
    Entry("s-not-list", S_, "sources: a string", S(lambda m: m.update(sources="all of them"))),
    Entry("s-unknown-field", S_, "an unknown field in an entry", first_source(owner="me")),
    Entry("s-dup-key", S_, "a key written twice", text("sources.yaml", lambda t: "format: investigator/sources@1\n" + t)),
    Entry("s-format-version", S_, "format investigator/sources@9", S(lambda m: m.update(format="investigator/sources@9"))),
    Entry("s-count", S_, "31 sources with INVESTIGATOR_MAX_SOURCES=5", env={"INVESTIGATOR_MAX_SOURCES": "5"}),
    Entry("s-total", S_, "224 KB of sources with INVESTIGATOR_MAX_CASE_BYTES=50000",
          env={"INVESTIGATOR_MAX_CASE_BYTES": "50000"}),
    Entry("s-ok-symlink-in", S_, "a symlink to a file inside the case folder",
          both(symlink("sources/notes/alias.md", lambda c, w: c / "sources/notes/oncall-handover-2026-04-29.md"),
               S(lambda m: m["sources"].append({"id": "alias", "path": "sources/notes/alias.md", "kind": "note",
                                                "groups": ["sre-oncall"]}))),
          expect="accept", why="a link that stays inside the case folder reads a file of the case"),
    Entry("s-ok-unicode-path", S_, "a file name with spaces and CJK",
          add({"id": "cjk", "path": "sources/notes/交接 notes.md", "kind": "note"}, {"sources/notes/交接 notes.md": NOTE}),
          expect="accept", why="any file name inside the folder"),

    # --- source files ------------------------------------------------------------------------------
    Entry("f-50mb", F_, "a 50 MB note (the tester's)", both(sparse("sources/notes/huge.md", 50 * 1024 * 1024), S(
        lambda m: m["sources"].append({"id": "huge", "path": "sources/notes/huge.md", "kind": "note",
                                       "groups": ["sre-oncall"]})))),
    Entry("f-env-cap", F_, "a 5 KB runbook with INVESTIGATOR_MAX_SOURCE_BYTES=2KB", env={"INVESTIGATOR_MAX_SOURCE_BYTES": "2KB"}),
    Entry("f-latin1", F_, "a Latin-1 log", add({"id": "l1", "path": "sources/logs/latin1.log", "kind": "log"},
                                              {"sources/logs/latin1.log": "2026-04-29T10:40:00+08:00 ERROR caf\xe9\n".encode("latin-1")})),
    Entry("f-utf16", F_, "a UTF-16 log (as PowerShell writes it)",
          add({"id": "u16", "path": "sources/logs/u16.log", "kind": "log"},
              {"sources/logs/u16.log": "2026-04-29T10:40:00+08:00 ERROR x\n".encode("utf-16")})),
    Entry("f-ok-bom", F_, "a note that starts with a UTF-8 byte order mark",
          add({"id": "bom", "path": "sources/notes/bom.md", "kind": "note"}, {"sources/notes/bom.md": b"\xef\xbb\xbf" + NOTE.encode()}),
          expect="accept", why="the mark is dropped (editors on Windows write it)"),
    Entry("f-binary", F_, "a binary file as a note", raw(SECURITY_NOTE, b"\x7fELF\x02\x01\x01\x00CANARY\x00\xff")),
    Entry("f-no-front", F_, "a note without front matter", text(SECURITY_NOTE, lambda t: "CANARY first line\n" + t)),
    Entry("f-front-syntax", F_, "security-only front matter that is not YAML",
          text(SECURITY_NOTE, lambda t: t.replace("---\n", "---\nx: [CANARY\n", 1))),
    Entry("f-front-dup", F_, "security-only front matter with a key twice",
          text(SECURITY_NOTE, lambda t: t.replace("---\n", "---\nCANARY: 1\nCANARY: 2\n", 1))),
    Entry("f-front-status", F_, "security-only front matter status: CANARY",
          text(SECURITY_NOTE, lambda t: re.sub(r"^status:.*$", "status: CANARY", t, count=1, flags=re.MULTILINE))),
    Entry("f-front-date", F_, "security-only updated_at: CANARY",
          text(SECURITY_NOTE, lambda t: re.sub(r"^updated_at:.*$", "updated_at: CANARY", t, count=1, flags=re.MULTILINE))),
    Entry("f-front-tag", F_, "security-only front matter with a !!python tag",
          text(SECURITY_NOTE, lambda t: t.replace("---\n", "---\nx: !!python/object:CANARY {}\n", 1))),
    Entry("f-front-alias", F_, "security-only front matter with an undefined alias",
          text(SECURITY_NOTE, lambda t: t.replace("---\n", "---\nx: *CANARY\n", 1))),
    Entry("f-front-scalar", F_, "security-only front matter that is a scalar",
          text(SECURITY_NOTE, lambda t: "---\nCANARY\n---\n" + t)),
    Entry("f-front-groups", F_, "front matter groups disagreeing with the manifest",
          text(SECURITY_NOTE, lambda t: re.sub(r"^groups:.*$", "groups: [everyone]", t, count=1, flags=re.MULTILINE)
               if "\ngroups:" in t else t.replace("---\n", "---\ngroups: [everyone]\n", 1))),
    Entry("f-wiki-front-syntax", F_, "an editable (untrusted) wiki page whose front matter is not YAML",
          text(WIKI_PAGE, lambda t: t.replace("---\n", "---\nx: [CANARY\n", 1)),
          expect="accept", why="an untrusted page anyone may edit is left out, named on stderr; the case goes on"),
    Entry("f-wiki-front-groups", F_, "an editable (untrusted) wiki page whose groups disagree with the manifest",
          text(WIKI_PAGE, lambda t: re.sub(r"^groups:.*$", "groups: [everyone]", t, count=1, flags=re.MULTILINE)
               if "\ngroups:" in t else t.replace("---\n", "---\ngroups: [everyone]\n", 1)),
          expect="accept", why="left out like any broken editable page; its groups are never trusted over the manifest"),
    Entry("f-csv-header", F_, "finance-only CSV with a header CANARY,value", fin("metric", "csv", "c.csv", "CANARY,value\n",
                                                                               **{"c.csv.meta.yaml": "metric: m\n"})),
    Entry("f-csv-nometa", F_, "a CSV without its sidecar", fin("metric", "csv", "n.csv", "ts,value\n")),
    Entry("f-meta-role", F_, "finance-only sidecar role: CANARY",
          fin("metric", "csv", "r.csv", "ts,value\n", **{"r.csv.meta.yaml": "metric: m\nrole: CANARY\n"})),
    Entry("f-meta-dup", F_, "finance-only sidecar with a key twice",
          fin("metric", "csv", "d.csv", "ts,value\n", **{"d.csv.meta.yaml": "metric: m\nCANARY: 1\nCANARY: 2\n"})),
    Entry("f-meta-inf", F_, "a sidecar capacity: .inf",
          fin("metric", "csv", "i.csv", "ts,value\n", **{"i.csv.meta.yaml": "metric: m\ncapacity: .inf\n"})),
    Entry("f-prom", F_, "finance-only Prometheus JSON that is broken",
          fin("metric", "prometheus", "p.json", '{"data": {"result": CANARY}}')),
    Entry("f-change-time", F_, "finance-only change record started_at: CANARY",
          fin("change", "record", "c.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\nstarted_at: CANARY\n")),
    Entry("f-change-order", F_, "a change completed before it started",
          fin("change", "record", "o.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
              "started_at: 2026-04-29T10:00:00Z\ncompleted_at: 2026-04-29T09:00:00Z\n")),
    Entry("f-change-field", F_, "finance-only change with an unknown config_changes field CANARY",
          fin("change", "record", "f.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
              "started_at: 2026-04-29T10:00:00Z\nconfig_changes: [{key: k, CANARY_FIELD: 1}]\n")),
    Entry("f-helm", F_, "finance-only Helm history that is broken JSON", fin("change", "helm", "h.json", '[{"revision": CANARY}]')),
    Entry("f-config-key", F_, "finance-only config record with a number as key",
          fin("config", "record", "r.yaml", "service: s\nenvironment: e\nsettings: {7: CANARY}\n")),
    Entry("f-config-dup", F_, "finance-only YAML config with a key twice", fin("config", "yaml", "y.yaml", "CANARY: 1\nCANARY: 2\n")),
    Entry("f-config-dup-doc2", F_, "a key twice in the second document of a YAML config",
          fin("config", "yaml", "y2.yaml", "a: 1\n---\nCANARY: 1\nCANARY: 2\n")),
    Entry("f-config-bomb", F_, "an alias bomb in a YAML config", fin("config", "yaml", "b.yaml", BOMB)),
    Entry("f-config-bomb-doc2", F_, "an alias bomb in the second document", fin("config", "yaml", "b2.yaml", "a: 1\n---\n" + BOMB)),
    Entry("f-config-rec", F_, "a recursive YAML config", fin("config", "yaml", "rec.yaml", "a: &r [1, *r]\n")),
    Entry("f-flags-bomb", F_, "an alias bomb in a flag history", fin("change", "flags", "flags.yaml",
                                                                       BOMB + "- {flag: f, at: 2026-04-29T10:00:00Z}\n")),
    Entry("f-config-json", F_, "finance-only JSON config that is broken", fin("config", "json", "j.json", '{"a": CANARY}')),
    Entry("f-catalog", F_, "finance-only catalog kind: CANARY",
          fin("catalog", "record", "cat.yaml", "services:\n  - name: x\n    kind: CANARY\n")),
    Entry("f-mapping", F_, "finance-only mapping with documents: CANARY",
          fin("mapping", "record", "m.yaml", "service: s\nenvironment: e\ndeployed_version: 1\ndocuments: CANARY\n")),
    Entry("f-ownership", F_, "an ownership verified_at without an offset",
          fin("ownership", "record", "o.yaml", "service: s\nverifications:\n  - {doc_id: d, version: v, verified_by: p, "
              "verified_at: 2026-04-21T11:00:00}\n")),
    Entry("f-describe", F_, "kubectl describe without captured_at",
          fin("kubernetes", "describe", "d.txt", "Name: p\nNamespace: n\nEvents:\n  Type Reason Age From Message\n"
              "  Warning X 5m y z\n")),
    Entry("f-ok-bad-lines", F_, "a log with lines that are not log lines", append(
        "sources/logs/order-service-prod-2026-04-29-1015-1055.log", "garbage without a timestamp\n\x1b[31m\x00"),
          expect="accept", why="kept as unparsed text with offsets (docs/case-format.md §4)"),
    Entry("f-ok-json-digits", F_, "a JSON log line with a 5,000-digit number",
          add({"id": "jl", "path": "sources/logs/j.jsonl", "kind": "log", "format": "json"},
              {"sources/logs/j.jsonl": '{"ts": "2026-04-29T10:40:00Z", "level": "error", "msg": "x", "n": '
               + "9" * 5000 + "}\n"}),
          expect="accept", why="the line is kept as unparsed text (§4); no crash on Python's int limit"),
    Entry("f-ok-deep-json", F_, "a trace nested 300 deep",
          add({"id": "tr", "path": "sources/t.json", "kind": "trace", "format": "otlp"},
              {"sources/t.json": '{"resourceSpans": ' + "[" * 300 + "]" * 300 + "}\n"}),
          expect="accept", why="kept as unparsed text (§4); the JSON parser stops at depth 200"),
    Entry("f-ok-epoch-huge", F_, "JSON log stamps of 1e300 and -1e20 seconds",
          add({"id": "je", "path": "sources/logs/e.jsonl", "kind": "log", "format": "json"},
              {"sources/logs/e.jsonl": '{"ts": 1e300, "level": "error", "msg": "x"}\n{"ts": -1e20, "msg": "y"}\n'}),
          expect="accept", why="lines without a usable time are kept as unparsed text (§4)"),
    Entry("f-ok-csv-epoch", F_, "a CSV point stamped 99999999999999999999",
          fin("metric", "csv", "e.csv", "ts,value\n99999999999999999999,1\n", **{"e.csv.meta.yaml": "metric: m\n"}),
          expect="accept", why="the point is kept as unparsed text (§4)"),
    Entry("f-ok-prom-nan", F_, "Prometheus values NaN, +Inf and a stamp of 1e300",
          fin("metric", "prometheus", "n.json", '{"status":"success","data":{"resultType":"matrix","result":[{"metric":'
              '{"__name__":"m"},"values":[[1777430100,"NaN"],[1777430160,"+Inf"],[1e300,"1"]]}]}}'),
          expect="accept", why="non-finite values are data (decided at run time, deciding.md); the bad stamp is kept as unparsed"),
    Entry("f-ok-empty-log", F_, "an empty log", add({"id": "el", "path": "sources/logs/empty.log", "kind": "log",
                                                    "format": "plain"}, {"sources/logs/empty.log": ""}),
          expect="accept", why="a source with no events is a source that says nothing"),

    # --- CLI arguments and environment -------------------------------------------------------------
    Entry("x-run-dotdot", X_, "run --run-id ../../x", argv=["--home", "home", "run", "case", "--run-id", "../../x"]),
    Entry("x-run-abs", X_, "run --run-id /tmp/x", argv=["--home", "home", "run", "case", "--run-id", "/tmp/x"]),
    Entry("x-run-dots", X_, "run --run-id ..", argv=["--home", "home", "run", "case", "--run-id", ".."]),
    Entry("x-run-long", X_, "run --run-id of 200 characters", argv=["--home", "home", "run", "case", "--run-id", "x" * 200]),
    Entry("x-run-empty", X_, "run --run-id ''", argv=["--home", "home", "run", "case", "--run-id", ""]),
    Entry("x-resume", X_, "resume ../../x", argv=["--home", "home", "resume", "../../x"]),
    Entry("x-show", X_, "show ../../x", argv=["--home", "home", "show", "../../x"]),
    Entry("x-grant", X_, "grant ../../x --group g", argv=["--home", "home", "grant", "../../x", "--group", "g"]),
    Entry("x-history", X_, "history ../x", argv=["--home", "home", "history", "../x"]),
    Entry("x-retrieval", X_, "run --retrieval nope", argv=["run", "case", "--retrieval", "nope"]),
    Entry("x-no-case", X_, "validate a folder that does not exist", argv=["validate", "nowhere"]),
    Entry("x-file-case", X_, "validate a file, not a folder", argv=["validate", "case/case.yaml"]),
    Entry("x-env-bytes", X_, "INVESTIGATOR_MAX_SOURCE_BYTES=lots", env={"INVESTIGATOR_MAX_SOURCE_BYTES": "lots"}),
    Entry("x-env-count", X_, "INVESTIGATOR_MAX_SOURCES=-1", env={"INVESTIGATOR_MAX_SOURCES": "-1"}),
    Entry("x-env-case", X_, "INVESTIGATOR_MAX_CASE_BYTES=1e9", env={"INVESTIGATOR_MAX_CASE_BYTES": "1e9"}),
    Entry("x-show-unknown", X_, "show a run that does not exist", argv=["--home", "home", "show", "no-such-run"]),

    # --- init ---------------------------------------------------------------------------------------
    Entry("i-latin1", I_, "an alert file that is not UTF-8", alert(b"\xff\xfe{}"), argv=INIT),
    Entry("i-empty", I_, "an empty alert file", alert(""), argv=INIT),
    Entry("i-labels-list", I_, "alert labels as a list", alert({"alerts": [{"labels": ["a"], "startsAt": "2026-04-29T02:41:00Z"}]}),
          argv=INIT),
    Entry("i-no-labels", I_, "an alert without environment/service labels",
          alert({"alerts": [{"labels": {"alertname": "x"}, "startsAt": "2026-04-29T02:41:00Z"}]}), argv=INIT),
    Entry("i-starts", I_, "startsAt: soon", alert({"alerts": [{"labels": {"env": "prod", "service": "s"}, "startsAt": "soon"}]}),
          argv=INIT),
    Entry("i-alerts-str", I_, "alerts: a string", alert({"alerts": "many"}), argv=INIT),
    Entry("i-json-list", I_, "a JSON list of numbers", alert([1, 2, 3]), argv=INIT),
    Entry("i-deep", I_, "an alert nested 100,000 deep", alert("[" * 100000 + "]" * 100000), argv=INIT),
    Entry("i-no-sources", I_, "--sources names no folder", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "nowhere", "--out", "new-case"]),
    Entry("i-out-exists", I_, "--out exists (no --force)", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", "case"]),
    Entry("i-huge", I_, "material holding a 50 MB file", alert(ALERT, lambda m: sparse("huge.log", 50 * 1024 * 1024)(m, m)),
          argv=INIT),
    Entry("i-bad-front", I_, "material with a note whose front matter is not YAML",
          alert(ALERT, lambda m: (m / "notes" / "bad-note.md").write_text("---\nx: [unclosed\n---\nbody\n")), argv=INIT),
    Entry("i-bad-sidecar", I_, "material with a sidecar that is not YAML",
          alert(ALERT, lambda m: (m / "metrics" / "order-service-prod-cpu.csv.meta.yaml").write_text("metric: [x\n")),
          argv=INIT),
    Entry("i-deep-json", I_, "material with a JSON file nested 100,000 deep",
          alert(ALERT, lambda m: (m / "deep.json").write_text("[" * 100000 + "]" * 100000)), argv=INIT),
    Entry("i-alerts-dict", I_, "alerts: an object", alert({"alerts": {"a": 1}}), argv=INIT),
    Entry("i-annotations", I_, "annotations: a list", alert({"alerts": [{"labels": {"env": "prod", "service": "s"},
                                                                        "annotations": [1], "startsAt": "2026-04-29T02:41:00Z"}]}),
          argv=INIT),
    Entry("i-url", I_, "generatorURL: a number", alert({"alerts": [{"labels": {"env": "prod", "service": "order-service"},
                                                                   "generatorURL": 5, "startsAt": "2026-04-29T02:41:00Z"}]}),
          argv=INIT, expect="accept", why="the URL is optional; one that is not text is ignored", may_write=("new-case",)),
    Entry("i-nested-out", I_, "a material note that does not validate, --out two folders deep",
          alert(ALERT, lambda m: (m / "notes" / "bad-note.md").write_text("---\ntitle: t\n---\nbody\n")),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", "x/y/new-case"]),
    Entry("i-out-dot", I_, "--out . --force (the working folder)", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", ".", "--force"]),
    Entry("i-out-material", I_, "--out the --sources folder, --force", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", "material", "--force"]),
    Entry("i-out-file", I_, "--out an existing file, --force", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", "alert.json", "--force"]),
    Entry("i-ok-replace", I_, "--out an existing case folder, --force", alert(ALERT),
          argv=["init", "--alert", "alert.json", "--sources", "material", "--out", "case", "--force"], expect="accept",
          why="--force replaces a case folder (one with case.yaml)", may_write=("case",)),
    Entry("i-ok-names", I_, "alert labels full of ../ and control characters", alert(alert_with(
        alertname="../../../etc/x\n\x1b[31m", service="order-service", environment="prod")), argv=INIT,
          expect="accept", why="the case id is made a name (letters, digits, ._-); labels stay text", may_write=("new-case",)),
]


# --- running ---------------------------------------------------------------------------------

def tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            # a folder counts by being there (a temporary file made and removed again changes its mtime)
            out[str(p.relative_to(root))] = (-1, -1) if name in dirnames else (st.st_size, st.st_mtime_ns)
    return out


def run_entry(entry: Entry, root: Path) -> Outcome:
    """Run one entry in a fresh sandbox under root (removed afterwards)."""
    from investigator.cli import main

    work = root / entry.id / "a" / "b" / "work"
    case = work / "case"
    shutil.copytree(REFERENCE, case)
    entry.setup(case, work)
    top = root / entry.id
    before = tree(top)
    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_env = Path.cwd(), {k: os.environ.get(k) for k in entry.env}
    os.environ.update(entry.env)
    os.chdir(work)
    code: int | None

    def alarm(_sig, _frame):  # noqa: ANN001, ANN202
        raise _Hung

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIMEOUT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(entry.argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
        kind = "accepted" if code == 0 else "refused"
    except _Hung:
        code, kind = None, "hung"
        err.write(f"still running after {TIMEOUT} s\n")
    except BaseException:  # noqa: BLE001 - counting exactly these
        code, kind = None, "traceback"
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    stderr = err.getvalue()
    if kind == "refused" and not clean(stderr):
        kind = "refused-unclear"
    after = tree(top)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    allowed = {k for k in changed if any(k == f"a/b/work/{w}" or k.startswith(f"a/b/work/{w}/") for w in entry.may_write)}
    outcome = Outcome(entry, code, stderr, kind,
                      partial=kind != "accepted" and bool(changed),
                      wrote=kind == "accepted" and bool(changed - allowed),
                      leak="CANARY" in stderr + out.getvalue())
    shutil.rmtree(top, ignore_errors=True)
    return outcome


class _Hung(BaseException):
    """Raised by the alarm in an entry that runs too long."""


def clean(stderr: str) -> bool:
    """One line naming the file and field (or the argument / variable), or argparse's usage + error."""
    lines = stderr.strip().splitlines()
    if "Traceback" in stderr or not lines:
        return False
    if len(lines) == 1:
        return bool(ONE_LINE.match(lines[0]) or ARG_LINE.match(lines[0]) or NO_RUN.match(lines[0]))
    if all(ONE_LINE.match(line) for line in lines):  # several problems found at once (init's front matter), a line each
        return True
    # argparse: its usage (which may wrap) and one error line naming the argument
    return lines[0].startswith("usage:") and bool(ARGPARSE.search(lines[-1]))


def run_all(root: Path, entries: list[Entry] | None = None) -> list[Outcome]:
    return [run_entry(e, root) for e in (entries or CATALOGUE)]


def _more() -> list[Entry]:
    from bench.hostile.more import more_entries  # issue 19's entries (vocabularies, shapes, outputs, arguments)

    return more_entries()


CATALOGUE += _more()

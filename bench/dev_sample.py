"""The dev sample's figures, the way the issue asks for them: by cause kind, depth and red herring.

Joins an `investigator eval` result (eval.json) with the sample's generator parameters (each raw
case's gold.yaml `parameters`: cause kind, depth, red herrings) — the evaluator's side, never the
runtime's — and prints a Markdown report: root cause right (entity and change), confirmed with the
right root, false confirmations, counter-evidence right, stop right, rounds and reads per hop,
time per case p50/p95, and every miss with its case.

    python bench/dev_sample.py /tmp/ev/eval.json ../shared/cases-dev/raw > bench/results/dev-sample.md
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import yaml


def _pct(a: int, b: int) -> str:
    return f"{a}/{b}" if b else "n/a"


def _q(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def load(eval_json: Path, raw: Path) -> list[dict]:
    data = json.loads(eval_json.read_text())
    out = []
    for c in data["cases"]:
        gold = yaml.safe_load((raw / c["case_id"] / "gold.yaml").read_text())
        p = gold.get("parameters", {})
        ce = [k for k in c["expected_verdicts"] if k.startswith("counter")]
        out.append({
            **c,
            "kind": p.get("cause_kind", "-"), "depth_gold": p.get("depth"),
            "herrings": [h.split(":")[0] for h in p.get("red_herrings", [])],
            "herrings_full": p.get("red_herrings", []),
            "ce_ok": all(c["verdicts"].get(k) == c["expected_verdicts"][k] for k in ce),
            "names_root": c["root_expected"] is not None and c["causal_expected"] in ("confirmed", "inferred"),
        })
    return out


def row(name: str, cs: list[dict]) -> str:
    named = [c for c in cs if c["names_root"]]
    right = sum(bool(c["root_ok"]) for c in named)
    conf = sum(bool(c["root_ok"]) and c["causal_verdict"] == "confirmed" for c in named)
    fc = sum(c["false_confirmations"] for c in cs)
    ce = sum(c["ce_ok"] for c in cs)
    stop = sum(c["stop"] == c["stop_expected"] for c in cs)
    per_hop = [c["rounds"] / (c["depth_gold"] + 1) for c in cs if c["depth_gold"]]
    reads_hop = [c["reads"] / (c["depth_gold"] + 1) for c in cs if c["depth_gold"]]
    return (f"| {name} | {len(cs)} | {_pct(right, len(named))} | {_pct(conf, len(named))} | {fc} | {_pct(ce, len(cs))} "
            f"| {_pct(stop, len(cs))} | {statistics.mean(per_hop) if per_hop else 0:.1f} "
            f"| {statistics.mean(reads_hop) if reads_hop else 0:.1f} |")


def _cost(c: dict) -> str:
    """`case [tool] rounds/reads (root by round R, N reads)`: what the run cost, and what reaching its root did."""
    line = f"{c['case_id']} [{c['retrieval']}] {c['rounds']}/{c['reads']}"
    if not c.get("root_round"):
        return line
    return line + f" (root by round {c['root_round']}" + (f", {c['root_reads']} reads" if c.get("root_reads") else "") + ")"


def report(cases: list[dict]) -> str:
    lines = ["| group | cases | root right | confirmed, right root | false conf. | counter-evidence right "
             "| stop right | rounds / hop | reads / hop |", "|" + " --- |" * 9]
    for tool in sorted({c["retrieval"] for c in cases}):
        mine = [c for c in cases if c["retrieval"] == tool]
        lines.append(row(f"**{tool}: all**", mine))
        for label, key in (("cause", "kind"), ("depth", "depth_gold")):
            groups: dict[str, list[dict]] = defaultdict(list)
            for c in mine:
                groups[str(c[key])].append(c)
            lines += [row(f"{tool} {label} {k}", v) for k, v in sorted(groups.items())]
        herr: dict[str, list[dict]] = defaultdict(list)
        for c in mine:
            for h in dict.fromkeys(c["herrings_full"]):
                herr[h].append(c)
        lines += [row(f"{tool} red herring {k}", v) for k, v in sorted(herr.items())]
    lines += ["", "Time per case (seconds, index build apart):", ""]
    for tool in sorted({c["retrieval"] for c in cases}):
        secs = [c["seconds"] for c in cases if c["retrieval"] == tool]
        lines.append(f"- {tool}: p50 {_q(secs, 0.5):.1f} s, p95 {_q(secs, 0.95):.1f} s, max {max(secs):.1f} s")
    deep = [c for c in cases if c["depth_gold"] == 5]
    if deep:
        lines += ["", "Depth-5 incidents (rounds, reads; the round and reads by which the root cause was reached): "
                  + ", ".join(_cost(c) for c in deep)]
    misses = [c for c in cases if (c["names_root"] and not c["root_ok"]) or c["stop"] != c["stop_expected"]
              or not c["ce_ok"] or c["false_confirmations"]]
    lines += ["", "Misses:", ""]
    lines += [f"- {c['case_id']} [{c['retrieval']}] ({c['kind']}, depth {c['depth_gold']}): root found "
              f"{c['root_found']} expected {c['root_expected']}; causal {c['causal_verdict']} "
              f"(expected {c['causal_expected']}); stop {c['stop']} (expected {c['stop_expected']})" for c in misses]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(report(load(Path(sys.argv[1]), Path(sys.argv[2]))))

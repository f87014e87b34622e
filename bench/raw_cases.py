"""The dev sample as exported, through `investigator init` and `investigator eval`.

For each raw incident folder (case.md, manifest.yaml, sources/, gold.yaml) the bench plays the
pager and the access administrator — never the product:

- the alert becomes an Alertmanager webhook payload built from case.md's alert table;
- manifest.yaml becomes an access map (one path glob per file with its allowed groups; the
  principal from case.md);
- `investigator init --alert … --sources RAW/sources --access … --inventory RAW/manifest.yaml --out OUT/CASE`
  writes the case (the manifest is the export's own inventory: service, environment, timezone,
  metric and unit of each file; `--no-inventory` leaves it out);
- the converted twin's expected.yaml (scoring gold) is copied in, its claim ids renamed to the
  ids init gave the claims of the same kind;
- `investigator eval` runs on every case that init wrote, and `bench/dev_sample.py` prints the
  table (case ids mapped back to the raw folder names).

    INVESTIGATOR_INDEX_ROOT=/tmp/raw-index python bench/raw_cases.py \
        --raw ../shared/cases-dev/raw --converted ../shared/cases-dev/converted --out /tmp/raw-init

Init failures are listed with their error and count as cases not run. Indexes are kept in
INVESTIGATOR_INDEX_ROOT (default OUT/_index) between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _table(md: str, heading: str) -> dict[str, str]:
    """The `| field | value |` table under a `## heading`."""
    m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", md, re.M | re.S)
    out: dict[str, str] = {}
    for line in (m.group(1) if m else "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] not in ("field", "budget") and not set(cells[0]) <= set("-: "):
            out[cells[0]] = "|".join(cells[1:]).strip()
    return out


def _ticks(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def alert_payload(case_md: str) -> dict:
    """An Alertmanager webhook payload (version 4) for the alert described in case.md."""
    t = _table(case_md, "Alert")
    rule_cell = t.get("rule", "alert")
    rule = (_ticks(rule_cell) or [rule_cell])[0]
    description = rule_cell.split("—", 1)[1].strip() if "—" in rule_cell else ""
    subject = t.get("subject", "")
    env, service = (_ticks(subject) or ["/"])[0].split("/", 1)
    text = t.get("alert text", "").strip().strip('"')
    labels = {"alertname": rule, "service": service, "environment": env}
    if t.get("severity"):
        labels["severity"] = t["severity"]
    alert = {"status": "firing", "labels": labels,
             "annotations": {"summary": text, **({"description": description} if description else {})},
             "startsAt": t["fired at"], "endsAt": "0001-01-01T00:00:00Z",
             "fingerprint": re.sub(r"[^A-Za-z0-9._-]", "-", t.get("alert id", rule))}
    return {"version": "4", "status": "firing", "receiver": "investigator", "groupKey": f"{{}}:{{alertname=\"{rule}\"}}",
            "groupLabels": {"alertname": rule}, "commonLabels": labels, "commonAnnotations": alert["annotations"],
            "externalURL": "http://alertmanager.invalid", "alerts": [alert]}


def access_map(case_md: str, manifest: dict) -> dict:
    """The access map init takes: the principal, and path globs (relative to sources/) → groups."""
    p = _table(case_md, "Investigating principal")
    principal = {"id": (_ticks(p.get("principal", "")) or ["investigator"])[0],
                 "groups": _ticks(p.get("groups", "")),
                 "may_request_access": p.get("may request more access during the run", "no").lower().startswith("yes")}
    rules = [{"glob": s["path"], "groups": list(s["allowed_groups"])} for s in manifest.get("sources", [])]
    return {"principal": principal, "access": rules}


def _rename_expected(expected: dict, converted_case: dict, init_case: dict) -> dict:
    """Gold claim ids renamed to init's ids, matched by claim kind (in order within a kind)."""
    kinds = {c["id"]: c["kind"] for c in converted_case.get("required_claims", [])}
    ours: dict[str, list[str]] = {}
    for c in init_case.get("required_claims", []):
        ours.setdefault(c["kind"] if c["kind"] != "metric_shift" else "symptom", []).append(c["id"])
    claims = {}
    for cid, gold in (expected.get("claims") or {}).items():
        kind = kinds.get(cid, "")
        kind = "symptom" if kind == "metric_shift" else kind
        if ours.get(kind):
            claims[ours[kind].pop(0)] = gold
    return {**expected, "claims": claims}


def prepare(raw: Path, converted: Path, out: Path, python: str, inventory: bool = True
            ) -> tuple[list[Path], dict[str, str], dict[str, str]]:
    """Init every raw case into OUT; return the cases written, init id → raw name, and failures."""
    written, names, failed = [], {}, {}
    work = out / "_inputs"
    work.mkdir(parents=True, exist_ok=True)
    for case in sorted(p for p in raw.iterdir() if (p / "case.md").is_file()):
        md = (case / "case.md").read_text()
        manifest = yaml.safe_load((case / "manifest.yaml").read_text())
        alert = work / f"{case.name}.alert.json"
        alert.write_text(json.dumps(alert_payload(md), indent=1))
        access = work / f"{case.name}.access.yaml"
        access.write_text(yaml.safe_dump(access_map(md, manifest), sort_keys=False))
        dest = out / case.name
        cmd = [python, "-m", "investigator.cli", "init", "--alert", str(alert), "--sources", str(case / "sources"),
               "--access", str(access), "--out", str(dest), "--force",
               *(["--inventory", str(case / "manifest.yaml")] if inventory else [])]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            failed[case.name] = (r.stderr or r.stdout).strip().splitlines()[-1:][0] if (r.stderr or r.stdout).strip() else "?"
            continue
        init_case = yaml.safe_load((dest / "case.yaml").read_text())
        twin = converted / case.name
        if (twin / "expected.yaml").is_file():
            expected = _rename_expected(yaml.safe_load((twin / "expected.yaml").read_text()),
                                        yaml.safe_load((twin / "case.yaml").read_text()), init_case)
            (dest / "expected.yaml").write_text(yaml.safe_dump(expected, sort_keys=False, allow_unicode=True))
        names[init_case["id"]] = case.name
        written.append(dest)
    return written, names, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", type=Path, default=ROOT.parent / "shared/cases-dev/raw")
    ap.add_argument("--converted", type=Path, default=ROOT.parent / "shared/cases-dev/converted")
    ap.add_argument("--out", type=Path, default=Path("/tmp/raw-init"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="raw case names to run (default: all)")
    ap.add_argument("--init-only", action="store_true", help="write the cases, skip eval")
    ap.add_argument("--no-inventory", action="store_true",
                    help="do not pass manifest.yaml to init as the material's inventory (--inventory)")
    args = ap.parse_args(argv)
    python = sys.executable
    raw = args.raw
    if args.only:
        sel = args.out / "_raw"
        sel.mkdir(parents=True, exist_ok=True)
        for n in args.only:
            if not (sel / n).exists():
                (sel / n).symlink_to((raw / n).resolve())
        raw = sel
    cases, names, failed = prepare(raw, args.converted, args.out, python, not args.no_inventory)
    for name, err in failed.items():
        print(f"init failed: {name}: {err}", file=sys.stderr)
    print(f"init wrote {len(cases)} of {len(cases) + len(failed)} cases into {args.out}", file=sys.stderr)
    if args.init_only or not cases:
        return 0 if not failed else 1
    ev = args.out / "_eval"
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
           # indexes kept between runs (a case re-initialised from the same material reuses its index)
           "INVESTIGATOR_INDEX_ROOT": os.environ.get("INVESTIGATOR_INDEX_ROOT", str(args.out.resolve() / "_index"))}
    subprocess.run([python, "-m", "investigator.cli", "eval", *map(str, cases), "--tool", "basic",
                    "--jobs", str(args.jobs), "--out", str(ev)], cwd=ROOT, env=env, check=False)
    data = json.loads((ev / "eval.json").read_text())
    for c in data["cases"]:
        c["case_id"] = names.get(c["case_id"], c["case_id"])
    (ev / "eval-raw-names.json").write_text(json.dumps(data, indent=1))
    r = subprocess.run([python, str(ROOT / "bench/dev_sample.py"), str(ev / "eval-raw-names.json"), str(args.raw)],
                       cwd=ROOT, capture_output=True, text=True, check=False)
    print(r.stdout, end="")
    print(r.stderr, end="", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

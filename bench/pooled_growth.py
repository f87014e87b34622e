"""Tables of the pooled retrieval bench: pooled vs own-corpus recall, build by stage and query
latency at each pool size, with growth exponents (log-log slope of time against passages).

    python bench/pooled_growth.py bench/results/pooled   # reads pooled-*.json and own-*.json there
    python bench/pooled_growth.py bench/results/pooled/round2   # own-*.json from the parent folder

An exponent is given for each pair of neighbouring sizes and as the least-squares slope over all
sizes; 1 is linear growth. Stages under 0.5 s at the smallest size get no exponent (noise). CPU
seconds are the whole process's, all threads (`tools.stages`): on a shared machine they move less
with the load than wall seconds do. "total" is the build's wall clock and the sum of the stages' CPU.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

HIPPORAG2_R5 = {"musique-dev100": 74.7, "hotpotqa-dev100": 96.3, "2wiki-dev100": 90.4}


def slope(xs: list[float], ys: list[float]) -> float | None:
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def _exps(sizes: list[float], values: list[float]) -> str:
    pairs = [slope(sizes[i:i + 2], values[i:i + 2]) for i in range(len(sizes) - 1)]
    fit = slope(sizes, values)
    shown = [f"{p:.2f}" if p is not None else "n/a" for p in pairs]
    return " / ".join(shown) + f" | {fit:.2f}" if fit is not None else " / ".join(shown) + " | n/a"


def recall_table(pooled: dict[str, Any], own: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| set | tool | pooled R@2 | own R@2 | pooled R@5 | own R@5 | Δ R@5 (points) | pooled R@10 | own R@10 "
             "| HippoRAG 2 R@5 |", "|" + " --- |" * 10]

    def pct(r: dict[str, Any] | None, key: str) -> str:
        return "n/a" if r is None else f"{100 * r[key]:.1f}"

    for name in next(iter(pooled["tools"].values()))["sets"]:
        for tool, r in pooled["tools"].items():
            s = r["sets"][name]
            o = own.get(name, {}).get("tools", {}).get(tool)
            delta = "n/a" if o is None else f"{100 * (s['recall@5'] - o['recall@5']):+.1f}"
            lines.append(f"| {name} | {tool} | {pct(s, 'recall@2')} | {pct(o, 'recall@2')} | {pct(s, 'recall@5')} "
                         f"| {pct(o, 'recall@5')} | {delta} | {pct(s, 'recall@10')} | {pct(o, 'recall@10')} "
                         f"| {HIPPORAG2_R5.get(name, 'n/a')} |")
    return lines


def growth_tables(runs: list[dict[str, Any]]) -> list[str]:
    sizes = [float(r["pool"]["passages"]) for r in runs]
    head = " | ".join(f"{int(s)} passages" for s in sizes)
    pair_head = " / ".join(f"{int(a)}→{int(b)}" for a, b in zip(sizes, sizes[1:], strict=False))
    lines = [f"| stage: wall s / CPU s | {head} | wall exponent {pair_head} | wall fit | CPU exponent {pair_head} "
             "| CPU fit |", "|" + " --- |" * (len(sizes) + 5)]
    names = list(dict.fromkeys(n for r in runs for n in r["stages"]))
    for n in [*names, "total"]:
        wall = [r["build_wall_seconds"] if n == "total" else r["stages"].get(n, {}).get("wall", 0.0) for r in runs]
        cpu = [sum(t["cpu"] for t in r["stages"].values()) if n == "total" else r["stages"].get(n, {}).get("cpu", 0.0)
               for r in runs]
        exps = f"{_exps(sizes, wall)} | {_exps(sizes, cpu)}" if wall[0] >= 0.5 else "– | – | – | –"
        lines.append(f"| {n} | " + " | ".join(f"{w:.2f} / {c:.2f}" for w, c in zip(wall, cpu, strict=True))
                     + f" | {exps} |")
    lines += ["", f"| tool: query ms | {head} | exponent of p50 {pair_head} | exponent fit |",
              "|" + " --- |" * (len(sizes) + 3)]
    for tool in runs[0]["tools"]:
        p50 = [r["tools"][tool]["query_ms_p50"] for r in runs]
        p95 = [r["tools"][tool]["query_ms_p95"] for r in runs]
        lines.append(f"| {tool} p50 / p95 | " + " | ".join(f"{a} / {b}" for a, b in zip(p50, p95, strict=True))
                     + f" | {_exps(sizes, p50)} |")
    lines += ["", f"| memory | {head} |", "|" + " --- |" * (len(sizes) + 1),
              "| peak RSS after build, MB | " + " | ".join(str(r["peak_rss_mb_after_build"]) for r in runs) + " |",
              "| peak RSS at the end, MB | " + " | ".join(str(r["peak_rss_mb"]) for r in runs) + " |"]
    return lines


def main(folder: Path) -> str:
    runs = sorted((json.loads(p.read_text()) for p in folder.glob("pooled-*.json")),
                  key=lambda r: r["pool"]["passages"])
    owns = list(folder.glob("own-*.json")) or list(folder.parent.glob("own-*.json"))  # a second round's folder
    own = {json.loads(p.read_text())["dataset"]: json.loads(p.read_text()) for p in owns}
    out = [f"### Recall, pooled ({runs[-1]['pool']['passages']} passages) vs own corpus", "",
           *recall_table(runs[-1], own), "", "### Build and query cost by pool size", "", *growth_tables(runs)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results/pooled")))

#!/usr/bin/env python3
"""Markdown tables from benchmark result files (`toroid bench --json`, `bench/peers.py --json`).

One row per case, one column per engine (median us), then the speed-up of the target engine
over each other engine and the geometric mean of every speed-up column. Used to write
docs/performance.md:

    python3 bench/report.py RESULTS.json [MORE.json ...] [--target compiled] [--title TEXT]
"""
import argparse
import json
import math
import sys


def load(paths):
    records, machines = [], []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        machines.append(doc.get("machine", {}))
        for r in doc.get("records", []):
            if r.get("error"):
                continue
            records.append(r)
    return records, machines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--target", default="compiled", help="engine whose speed-ups are reported")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    records, machines = load(args.files)
    engines, cases, times = [], [], {}
    for r in records:
        e, c = r["engine"], r["case"]
        if e not in engines:
            engines.append(e)
        if c not in cases:
            cases.append(c)
        times[(c, e)] = r["median_us"]
    if args.target not in engines:
        sys.exit(f"report.py: no records of engine '{args.target}'")
    others = [e for e in engines if e != args.target]
    order = [args.target] + others
    if args.title:
        print(f"### {args.title}\n")
    for m in machines[:1]:
        print(f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('compiler', '?')}.\n")
    head = "| case | " + " | ".join(f"{e} (us)" for e in order) + " | " + " | ".join(
        f"vs {e}" for e in others) + " |"
    print(head)
    print("| --- |" + " ---: |" * (len(order) + len(others)))
    speedups = {e: [] for e in others}
    for c in cases:
        t = times.get((c, args.target))
        cells = [f"{times[(c, e)]:.1f}" if (c, e) in times else "" for e in order]
        ratios = []
        for e in others:
            if t and (c, e) in times:
                s = times[(c, e)] / t
                speedups[e].append(s)
                ratios.append(f"{s:.2f}x")
            else:
                ratios.append("")
        print(f"| {c} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    gm = []
    for e in others:
        v = speedups[e]
        gm.append(f"**{math.exp(sum(map(math.log, v)) / len(v)):.2f}x**" if v else "")
    print("| geometric mean | " + " | ".join("" for _ in order) + " | " + " | ".join(gm) + " |")
    slower = {e: sum(1 for s in speedups[e] if s < 1) for e in others}
    print()
    print("Rows where " + args.target + " is slower: " +
          ", ".join(f"{n} of {len(speedups[e])} vs {e}" for e, n in slower.items()) + ".")


if __name__ == "__main__":
    main()

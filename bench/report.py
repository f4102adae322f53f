#!/usr/bin/env python3
"""Markdown tables and plots from benchmark result files (`toroid bench --json`,
`bench/peers.py --json`).

One row per case, one column per engine (median us), then the speed-up of the target engine
over each other engine and the geometric mean of every speed-up column. `--plot FILE.png`
also draws those speed-ups as bars per row and engine (log scale, a line at 1x, each
engine's geometric mean marked). Used to write docs/performance.md:

    python3 bench/report.py RESULTS.json [MORE.json ...] [--target compiled|toroid] [--title TEXT]
                            [--plot FILE.png] [--dpi N]
"""
import argparse
import json
import math
import os
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


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


# Each engine keeps its color in every plot.
ENGINE_COLORS = {"torch": "#4c72b0", "torch.compile": "#dd8452", "opencv": "#55a868", "pillow": "#c44e52",
                 "reference": "#8172b3"}


def plot(path, cases, times, target, others, title, dpi):
    """Horizontal bars: for each case (a row) one bar per engine with the speed-up of
    `target` over it, on a log axis; a line at 1x and each engine's geometric mean."""
    import matplotlib
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    peers = [e for e in others if any((c, e) in times and (c, target) in times for c in cases)]
    rows = [c for c in cases if (c, target) in times and any((c, e) in times for e in peers)]
    if not rows or not peers:
        sys.exit(f"report.py: nothing to plot: no case has times of {target} and another engine")
    height = max(3.0, 1.2 + 0.075 * len(rows) * max(len(peers), 2))
    fig, ax = plt.subplots(figsize=(11, height))
    band = 0.8 / len(peers)
    lo, hi = 1.0, 1.0
    for k, e in enumerate(peers):
        ys, xs = [], []
        for i, c in enumerate(rows):
            if (c, e) in times:
                ys.append(i - 0.4 + band * (k + 0.5))
                xs.append(times[(c, e)] / times[(c, target)])
        gm = geomean(xs)
        lo, hi = min(lo, *xs), max(hi, *xs)
        color = ENGINE_COLORS.get(e, f"C{k}")
        # Bars grow from 1x: to the right where the target is faster, to the left where slower.
        ax.barh(ys, [x - 1.0 for x in xs], height=band, left=1.0, color=color,
                label=f"{e} (geometric mean {gm:.2f}x, dashed)")
        ax.axvline(gm, color=color, linestyle="--", linewidth=1.5)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.3, hi * 1.3)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo / 1.3 <= t <= hi * 1.3]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # first case on top
    ax.set_xlabel(f"speed-up of {target} (time of the other engine / time of {target}; right of 1x: {target} "
                  "is faster)")
    ax.grid(axis="x", which="both", alpha=0.3)
    # Above the bars, where it hides none of them.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    shrink_png(path)


def shrink_png(path):
    """Rewrites the plot with a 64-color palette (a fraction of the size, no visible change:
    it has a few flat colors and their antialiased edges) when Pillow is present."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=64)
    tmp = path + ".tmp.png"
    small.save(tmp, optimize=True)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--target", default="",
                    help="engine whose speed-ups are reported (default: compiled, else toroid)")
    ap.add_argument("--title", default="")
    ap.add_argument("--plot", default="", metavar="FILE.png", help="also draw the speed-ups into this PNG")
    ap.add_argument("--dpi", type=int, default=100, help="resolution of --plot (default 100)")
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
    if not args.target:
        args.target = "compiled" if "compiled" in engines or "toroid" not in engines else "toroid"
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
        gm.append(f"**{geomean(v):.2f}x**" if v else "")
    print("| geometric mean | " + " | ".join("" for _ in order) + " | " + " | ".join(gm) + " |")
    slower = {e: sum(1 for s in speedups[e] if s < 1) for e in others}
    print()
    print("Rows where " + args.target + " is slower: " +
          ", ".join(f"{n} of {len(speedups[e])} vs {e}" for e, n in slower.items()) + ".")
    if args.plot:
        plot(args.plot, cases, times, args.target, others, args.title, args.dpi)
        print(f"\nPlot written to {args.plot}.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Per row and engine, the minimum over rounds of `toroid bench --json` medians, for two builds
(files DIR/focus_<build>_<round>.json, builds "old" and "new", engines specialized and compiled):
the generic/specialized ratio of each build, its geo-mean and the rows above 1.10.

    python3 bench/min_of_medians.py DIR"""
import json, glob, sys, math, collections
d = sys.argv[1]
best = collections.defaultdict(lambda: 1e18)
for f in glob.glob(d + "/focus_*_*.json"):
    b = f.split("focus_")[1].split("_")[0]
    for r in json.load(open(f))["records"]:
        k = (r["case"], b, r["engine"])
        best[k] = min(best[k], r["median_us"])
cases = sorted({k[0] for k in best})
print("%-58s %9s %9s %6s | %9s %9s %6s" % ("row (min of 5 medians, us)", "spec old", "gen old", "ratio", "spec new", "gen new", "ratio"))
rs = {"old": [], "new": []}
for c in cases:
    so, go, sn, gn = best[(c, "old", "specialized")], best[(c, "old", "compiled")], best[(c, "new", "specialized")], best[(c, "new", "compiled")]
    rs["old"].append(go / so); rs["new"].append(gn / sn)
    print("%-58s %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f" % (c[:58], so, go, go / so, sn, gn, gn / sn))
for b in ("old", "new"):
    g = math.exp(sum(map(math.log, rs[b])) / len(rs[b]))
    print(b, "geo-mean generic/specialized %.3f, rows above 1.10: %d of %d" % (g, sum(x > 1.10 for x in rs[b]), len(rs[b])))

"""SimCLR recipe (toroid.transforms.recipes) against torchvision.transforms.v2 on bench/transforms.py's
images (channels-last views), 1 thread, same seeds: the mean per image over a second pass and the
12 images toroid takes longest on, with torchvision's time beside.

    python3 bench/simclr_images.py
"""
import sys, time, statistics, torch, toroid
sys.path.insert(0, "bench")
from transforms import images
import toroid.transforms as TT
from toroid.transforms import recipes
from torchvision.transforms import v2 as TV
torch.set_num_threads(1); toroid.set_num_threads(1)
xs = images(100, 0, torch)
eng = {"tv": recipes.build("simclr", TV), "toroid": recipes.build("simclr", TT)}
for rnd in range(2):
    toroid.wait_for_background_builds()
    t = {e: [] for e in eng}
    for i, x in enumerate(xs):
        for e in eng:
            torch.manual_seed(i); t0 = time.perf_counter(); eng[e](x); t[e].append(time.perf_counter() - t0)
print("mean tv %.2f toroid %.2f ms" % (statistics.mean(t["tv"]) * 1e3, statistics.mean(t["toroid"]) * 1e3))
order = sorted(range(len(xs)), key=lambda i: -t["toroid"][i])
for i in order[:12]:
    print(i, tuple(xs[i].shape), "toroid %.1f ms tv %.1f ms" % (t["toroid"][i] * 1e3, t["tv"][i] * 1e3))
print("sum of toroid over tv ratio on images where toroid > 5 ms:", sum(t["toroid"][i] for i in range(100) if t["toroid"][i] > 0.005), sum(t["tv"][i] for i in range(100) if t["toroid"][i] > 0.005))

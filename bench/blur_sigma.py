"""gaussian_blur(kernel 23) of one (3, 224, 224) uint8 image at several sigmas, toroid against
torchvision.transforms.v2.functional, 1 thread: median of 5 rounds of 5 calls, and whether the
results are equal. Small sigmas put 2-D weights below float32's smallest normal number, which
costs microcode assists on Intel cores (docs/performance.md, section 11).

    python3 bench/blur_sigma.py
"""
import time, torch, toroid, statistics
import toroid.transforms.functional as F
from torchvision.transforms.v2 import functional as TF
torch.set_num_threads(1); toroid.set_num_threads(1)
x = torch.randint(0, 256, (3, 224, 224), dtype=torch.uint8)
for sigma in (0.3, 0.8, 1.0, 1.5):
    a = F.gaussian_blur(x, [23, 23], [sigma, sigma]); toroid.wait_for_background_builds()
    b = TF.gaussian_blur(x, [23, 23], [sigma, sigma])
    res = {}
    for name, fn in (("tv", lambda: TF.gaussian_blur(x, [23, 23], [sigma, sigma])), ("toroid", lambda: F.gaussian_blur(x, [23, 23], [sigma, sigma]))):
        ts = []
        for _ in range(5):
            t = time.perf_counter(); [fn() for _ in range(5)]; ts.append((time.perf_counter() - t) / 5)
        res[name] = statistics.median(ts) * 1e6
    print("sigma %.1f tv %.0f us toroid %.0f us  %.2fx  equal %s" % (sigma, res["tv"], res["toroid"], res["tv"] / res["toroid"], bool(torch.equal(a, b))))

#!/usr/bin/python3
# Writes Pillow's decoded pixels of each 8-bit PNG seed in fuzz/corpus/fuzz_png as
# (1, C, H, W) uint8 .npy (palettes as RGB, or RGBA with tRNS; 1-bit gray as 0/255), the
# values tests/io/png_test.cpp expects toroid's PNG reader to give.
import os
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "..", "fuzz", "corpus", "fuzz_png")
for name in sorted(os.listdir(CORPUS)):
    img = Image.open(os.path.join(CORPUS, name))
    if img.mode in ("I;16", "I;16B", "I"):
        continue  # 16-bit: rejected by toroid
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif img.mode == "1":
        img = img.convert("L")
    a = np.asarray(img)
    a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
    np.save(os.path.join(HERE, os.path.splitext(name)[0] + ".npy"), np.ascontiguousarray(a[None]))
    print(name, img.mode, a.shape)

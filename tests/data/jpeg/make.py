#!/usr/bin/python3
# Writes the foreign-made JPEGs of tests/io/jpeg_test.cpp with Pillow (libjpeg-turbo
# inside): RGB baseline and progressive, gray, CMYK, and Pillow's decoded pixels of the
# first three as (1, C, H, W) .npy, which toroid's decoder must match exactly.
from PIL import Image
import numpy as np

rng = np.random.default_rng(7)
h, w = 20, 28
y, x = np.mgrid[0:h, 0:w]
img = np.stack([x * 255 / w, y * 255 / h, 255 - (x + y) * 255 / (w + h)], -1) + rng.normal(0, 6, (h, w, 3))
img = np.clip(img, 0, 255).astype(np.uint8)
Image.fromarray(img).save('rgb_pillow.jpg', quality=85)
Image.fromarray(img).save('rgb_progressive_pillow.jpg', quality=85, progressive=True)
Image.fromarray(img).convert('L').save('gray_pillow.jpg', quality=85)
Image.fromarray(img).convert('CMYK').save('cmyk_pillow.jpg', quality=85)
for n in ['rgb_pillow', 'rgb_progressive_pillow', 'gray_pillow']:
    a = np.asarray(Image.open(n + '.jpg'))
    a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
    np.save(n + '.npy', np.ascontiguousarray(a[None]))

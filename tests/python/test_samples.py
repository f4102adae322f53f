"""Samples through toroid.transforms (transforms/_sample.py, _detection.py): dicts and tuples of
an image, masks, bounding boxes, key points and other values, each item moved by the same
draws. Without torchvision the checks are what each item must become (boxes by their formats'
arithmetic, masks by torch's own flips, crops and nearest resizes); where torchvision 0.26 is
installed (the GPU machine), torchvision's detection and segmentation presets give the same
image, boxes, labels and masks under the same seeds, on CPU and CUDA tensors."""

import copy
import pickle
import unittest

import toroid
import toroid.transforms as T
from toroid import tv_tensors as tvt

from support import TV2, needs_torch, needs_v2, torch


def make_sample(seed, h=None, w=None, n=5, device="cpu", instance_masks=True, int_boxes=False):
    """An image (uint8), n boxes inside it (XYXY), their labels, masks (one per box, or one
    class map) and an id that is not a tensor."""
    g = torch.Generator().manual_seed(seed)
    h = h or int(torch.randint(60, 200, (), generator=g))
    w = w or int(torch.randint(60, 200, (), generator=g))
    img = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g)
    x1 = torch.rand(n, generator=g) * (w - 10)
    y1 = torch.rand(n, generator=g) * (h - 10)
    bw = 2 + torch.rand(n, generator=g) * (w - x1 - 2)
    bh = 2 + torch.rand(n, generator=g) * (h - y1 - 2)
    boxes = torch.stack([x1, y1, x1 + bw, y1 + bh], 1)
    if int_boxes:
        boxes = boxes.round().to(torch.int64)
    if instance_masks:
        yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        masks = torch.stack([((xx >= b[0]) & (xx < b[2]) & (yy >= b[1]) & (yy < b[3])) for b in boxes]).to(torch.uint8)
    else:
        masks = torch.randint(0, 21, (h, w), dtype=torch.int64, generator=g)
    return {"image": tvt.Image(img.to(device)),
            "boxes": tvt.BoundingBoxes(boxes.to(device), format="XYXY", canvas_size=(h, w)),
            "labels": torch.randint(1, 91, (n,), generator=g).to(device),
            "masks": tvt.Mask(masks.to(device)),
            "image_id": seed}


@needs_torch
class SampleItems(unittest.TestCase):
    def test_every_item_follows_a_flip_and_other_values_pass(self):
        s = make_sample(1)
        h, w = s["image"].shape[-2:]
        out = T.RandomHorizontalFlip(p=1.0)(s)
        self.assertEqual(list(out.keys()), list(s.keys()))
        self.assertIsInstance(out["image"], tvt.Image)
        self.assertIsInstance(out["masks"], tvt.Mask)
        self.assertIsInstance(out["boxes"], tvt.BoundingBoxes)
        self.assertTrue(torch.equal(out["image"].as_subclass(torch.Tensor), s["image"].flip(-1).as_subclass(torch.Tensor)))
        self.assertTrue(torch.equal(out["masks"].as_subclass(torch.Tensor), s["masks"].flip(-1).as_subclass(torch.Tensor)))
        b = s["boxes"].as_subclass(torch.Tensor)
        want = torch.stack([w - b[:, 2], b[:, 1], w - b[:, 0], b[:, 3]], 1)
        self.assertTrue(torch.equal(out["boxes"].as_subclass(torch.Tensor), want))
        self.assertIs(out["labels"], s["labels"])
        self.assertEqual(out["image_id"], 1)

    def test_box_formats_flip_and_convert_back(self):
        s = make_sample(2)
        h, w = s["image"].shape[-2:]
        xyxy = s["boxes"]
        for fmt in ("XYWH", "CXCYWH"):
            boxes = T.functional.convert_bounding_box_format(xyxy, new_format=fmt)
            self.assertEqual(boxes.format.name, fmt)
            flipped = T.RandomVerticalFlip(p=1.0)(s["image"], boxes)[1]
            back = T.functional.convert_bounding_box_format(flipped, new_format="XYXY")
            b = xyxy.as_subclass(torch.Tensor)
            want = torch.stack([b[:, 0], h - b[:, 3], b[:, 2], h - b[:, 1]], 1)
            torch.testing.assert_close(back.as_subclass(torch.Tensor), want, rtol=0, atol=1e-4)

    def test_masks_take_the_geometry_in_nearest_mode_and_keep_their_dtype(self):
        s = make_sample(3, h=97, w=131, instance_masks=False)  # an int64 class map
        torch.manual_seed(0)
        out = T.Compose([T.Resize([48, 64], antialias=True), T.RandomCrop(40, pad_if_needed=True),
                         T.ColorJitter(brightness=0.5), T.RandomHorizontalFlip(p=1.0)])(s)
        torch.manual_seed(0)  # the same draws again: RandomCrop's offsets (the jitter's come after)
        top = int(torch.randint(0, 48 - 40 + 1, size=()))
        left = int(torch.randint(0, 64 - 40 + 1, size=()))
        m = s["masks"].as_subclass(torch.Tensor).float()[None, None]
        m = torch.nn.functional.interpolate(m, size=(48, 64), mode="nearest")[0, 0].to(torch.int64)
        m = m[top:top + 40, left:left + 40].flip(-1)
        self.assertEqual(out["masks"].dtype, torch.int64)
        self.assertTrue(torch.equal(out["masks"].as_subclass(torch.Tensor), m))
        self.assertEqual(tuple(out["image"].shape), (3, 40, 40))
        self.assertEqual(out["boxes"].canvas_size, (40, 40))

    def test_boxes_resize_crop_and_clamp(self):
        s = make_sample(4, h=100, w=120)
        out = T.Compose([T.Resize([50, 60]), T.CenterCrop(40)])(s)
        b = s["boxes"].as_subclass(torch.Tensor) * torch.tensor([0.5, 0.5, 0.5, 0.5])
        b = b - torch.tensor([10.0, 5.0, 10.0, 5.0])
        b[:, 0::2] = b[:, 0::2].clamp(0, 40)
        b[:, 1::2] = b[:, 1::2].clamp(0, 40)
        torch.testing.assert_close(out["boxes"].as_subclass(torch.Tensor), b, rtol=0, atol=1e-5)
        self.assertEqual(out["boxes"].canvas_size, (40, 40))

    def test_rotation_by_90_with_expand_turns_boxes_and_points(self):
        s = make_sample(5, h=50, w=70)
        pts = tvt.KeyPoints([[0.0, 0.0], [69.0, 49.0], [10.0, 20.0]], canvas_size=(50, 70))
        out = T.functional.rotate(pts, 90, expand=True)
        p = pts.as_subclass(torch.Tensor)
        # Counter-clockwise by 90 degrees: (x, y) -> (y, W - x) on the (W, H) canvas.
        torch.testing.assert_close(out.as_subclass(torch.Tensor), torch.stack([p[:, 1], 70 - p[:, 0]], 1),
                                   rtol=0, atol=1e-4)
        self.assertEqual(out.canvas_size, (70, 50))
        img, boxes = T.functional.rotate(s["image"], 90, expand=True), T.functional.rotate(s["boxes"], 90,
                                                                                             expand=True)
        self.assertEqual(tuple(img.shape[-2:]), (70, 50))
        self.assertEqual(boxes.canvas_size, (70, 50))

    def test_ioucrop_zeroes_the_boxes_it_drops_and_sanitize_removes_them(self):
        kept_some = False
        for seed in range(30):
            s = make_sample(seed, n=8)
            torch.manual_seed(seed)
            out = T.Compose([T.RandomIoUCrop(), T.SanitizeBoundingBoxes()])(s)
            b = out["boxes"].as_subclass(torch.Tensor)
            n = b.shape[0]
            self.assertEqual(out["labels"].shape[0], n)
            self.assertEqual(out["masks"].shape[0], n)
            self.assertEqual(tuple(out["masks"].shape[-2:]), tuple(out["image"].shape[-2:]))
            self.assertTrue(bool(((b[:, 2] - b[:, 0]) >= 1).all() and ((b[:, 3] - b[:, 1]) >= 1).all()))
            kept_some |= 0 < n < 8
        self.assertTrue(kept_some)

    def test_dict_fills_and_dtypes_by_item_type(self):
        s = make_sample(6, h=40, w=50)
        torch.manual_seed(1)
        out = T.Compose([T.RandomZoomOut(fill={tvt.Image: (123, 117, 104), tvt.Mask: 255}, p=1.0),
                         T.ToDtype({tvt.Image: torch.float32, tvt.Mask: torch.int64, "others": None}, scale=True)])(s)
        img, m = out["image"].as_subclass(torch.Tensor), out["masks"].as_subclass(torch.Tensor)
        self.assertEqual(img.dtype, torch.float32)
        self.assertEqual(m.dtype, torch.int64)
        corner = img[:, 0, 0] if img.shape[-1] > 50 else img[:, -1, -1]
        self.assertTrue(torch.allclose(corner, torch.tensor([123, 117, 104]) / 255.0))
        self.assertEqual(int(m[0, 0, 0] if m.shape[-1] > 50 else m[0, -1, -1]), 255)
        self.assertTrue(set(m.unique().tolist()) <= {0, 1, 255})

    def test_every_image_of_a_sample_takes_the_host_steps(self):
        # Two images in one sample: a step run on the host (RandomPhotometricDistort's channel
        # order) and the ops after it reach both.
        x = torch.randint(0, 256, (3, 10, 12), dtype=torch.uint8)
        t = T.Compose([T.RandomPhotometricDistort(brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0),
                                                  p=1.0), T.CenterCrop(8)])
        for seed in range(4):
            torch.manual_seed(seed)
            out = t({"a": tvt.Image(x), "b": tvt.Image(x)})
            torch.manual_seed(seed)
            alone = t(x)
            self.assertTrue(torch.equal(out["a"].as_subclass(torch.Tensor), alone))
            self.assertTrue(torch.equal(out["b"].as_subclass(torch.Tensor), alone))

    def test_a_callable_gets_the_whole_sample(self):
        s = make_sample(7)
        seen = []

        def peek(sample):
            seen.append(sorted(sample))
            return sample
        out = T.Compose([T.RandomHorizontalFlip(p=1.0), peek, T.RandomVerticalFlip(p=1.0)])(s)
        self.assertEqual(seen, [sorted(s)])
        self.assertTrue(torch.equal(out["masks"].as_subclass(torch.Tensor),
                                    s["masks"].as_subclass(torch.Tensor).flip(-1).flip(-2)))

    def test_two_arguments_are_a_tuple_sample(self):
        s = make_sample(8)
        img, target = T.RandomHorizontalFlip(p=1.0)(s["image"], {"boxes": s["boxes"], "labels": s["labels"]})
        self.assertEqual(target["boxes"].canvas_size, s["boxes"].canvas_size)
        self.assertIs(target["labels"], s["labels"])

    def test_a_plain_tensor_beside_an_image_passes_through(self):
        s = make_sample(9)
        extra = torch.zeros(3, 10, 10, dtype=torch.uint8)
        out = T.Resize([30, 30])({"image": s["image"], "extra": extra})
        self.assertIs(out["extra"], extra)
        self.assertEqual(tuple(out["image"].shape), (3, 30, 30))

    def test_per_sample_of_samples_equals_the_loop(self):
        for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
            with self.subTest(device=device):
                self.per_sample_equals_loop(device)

    def per_sample_equals_loop(self, device):
        samples = [make_sample(20 + i, device=device) for i in range(6)]
        t = T.Compose([T.RandomIoUCrop(), T.RandomHorizontalFlip(), T.Resize([64, 64]), T.ColorJitter(0.3, 0.3),
                       T.SanitizeBoundingBoxes()])
        torch.manual_seed(4)
        got = t.per_sample(copy.deepcopy(samples))
        state = torch.get_rng_state()
        torch.manual_seed(4)
        want = [t(s) for s in copy.deepcopy(samples)]
        self.assertTrue(torch.equal(torch.get_rng_state(), state))
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual(list(g), list(w))
            for k in w:
                if isinstance(w[k], torch.Tensor):
                    self.assertIs(type(g[k]), type(w[k]))
                    self.assertTrue(torch.equal(g[k].as_subclass(torch.Tensor), w[k].as_subclass(torch.Tensor)), k)
                else:
                    self.assertEqual(g[k], w[k])

    def test_threads_at_once_give_the_results_of_one(self):
        # Fixed pipelines (no draws from the shared generator) on samples and on file bytes,
        # from 4 threads at once: each result equals the one computed alone.
        import os
        import threading
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "jpeg", "rgb_pillow.jpg"),
                  "rb") as f:
            blob = f.read()
        samples = [make_sample(40 + i) for i in range(8)]
        jobs = [(T.Compose([T.Resize([48, 40]), T.CenterCrop(32), T.RandomHorizontalFlip(p=1.0)]), s) for s in samples]
        jobs += [(T.Compose([T.CenterCrop(10), T.Resize(8)]), blob), (T.Compose([T.Resize(12), T.CenterCrop(9)]), blob)]
        want = [t(copy.deepcopy(x)) for t, x in jobs]
        failures = []

        def run():
            for _ in range(10):
                for (t, x), w in zip(jobs, want):
                    got = t(copy.deepcopy(x))
                    pairs = [(got[k], w[k]) for k in w] if isinstance(w, dict) else [(got, w)]
                    for g, e in pairs:
                        if isinstance(e, torch.Tensor) and not torch.equal(g.as_subclass(torch.Tensor),
                                                                          e.as_subclass(torch.Tensor)):
                            failures.append(t)
        threads = [threading.Thread(target=run) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(failures, [])

    def test_bad_samples_are_clear_errors(self):
        s = make_sample(10)
        rotated = tvt.BoundingBoxes([[10.0, 10.0, 5.0, 5.0, 30.0]], format="XYWHR", canvas_size=s["boxes"].canvas_size)
        with self.assertRaises(toroid.Error):
            T.RandomHorizontalFlip(p=1.0)({"image": s["image"], "boxes": rotated})
        with self.assertRaises(TypeError):
            T.RandomIoUCrop()({"image": s["image"]})
        with self.assertRaises(toroid.Error):  # sizes that disagree
            T.RandomHorizontalFlip(p=1.0)({"image": s["image"], "masks": tvt.Mask(torch.zeros(4, 4))})
        with self.assertRaises(ValueError):
            T.SanitizeBoundingBoxes()({"image": s["image"], "labels": s["labels"]})
        with self.assertRaises(toroid.Error):  # a non-scalar fill for a mask
            T.Pad(2, fill=(1, 2, 3))(s)
        with self.assertRaisesRegex(toroid.Error, "not supported with bounding boxes"):  # as torchvision
            T.Pad(2, padding_mode="reflect")({"image": s["image"], "boxes": s["boxes"]})

    def test_sanitize_clamp_and_convert(self):
        canvas = (20, 30)
        boxes = tvt.BoundingBoxes([[0, 0, 10, 10], [5, 5, 5, 9], [-4, 2, 40, 8], [1, 1, 1.5, 8]], format="XYXY",
                                  canvas_size=canvas)
        labels = torch.tensor([1, 2, 3, 4])
        out = T.SanitizeBoundingBoxes()({"boxes": boxes, "labels": labels})
        self.assertEqual(out["labels"].tolist(), [1])
        clamped = T.ClampBoundingBoxes()({"boxes": boxes})["boxes"]
        self.assertEqual(clamped.as_subclass(torch.Tensor)[2].tolist(), [0.0, 2.0, 30.0, 8.0])
        out = T.SanitizeBoundingBoxes()({"boxes": clamped, "labels": labels})
        self.assertEqual(out["labels"].tolist(), [1, 3])
        cxcywh = T.ConvertBoundingBoxFormat("CXCYWH")({"boxes": boxes})["boxes"]
        self.assertEqual(cxcywh.as_subclass(torch.Tensor)[0].tolist(), [5.0, 5.0, 10.0, 10.0])


@needs_torch
@unittest.skipIf(tvt.FROM_TORCHVISION, "toroid.tv_tensors is torchvision's own here")
class OwnTypedTensors(unittest.TestCase):
    def test_operations_give_plain_tensors_and_copies_keep_the_type(self):
        b = tvt.BoundingBoxes([[1, 2, 3, 4]], format="xywh", canvas_size=(10, 20))
        self.assertIs(type(b + 1), torch.Tensor)
        c = b.clone()
        self.assertIsInstance(c, tvt.BoundingBoxes)
        self.assertEqual((c.format, c.canvas_size, c.clamping_mode), (tvt.BoundingBoxFormat.XYWH, (10, 20), "soft"))
        d = copy.deepcopy(b)
        self.assertEqual(d.canvas_size, (10, 20))
        e = pickle.loads(pickle.dumps(b))
        self.assertIsInstance(e, tvt.BoundingBoxes)
        self.assertEqual(e.format, tvt.BoundingBoxFormat.XYWH)
        self.assertEqual(tvt.Image(torch.zeros(4, 5)).shape, (1, 4, 5))
        with self.assertRaises(ValueError):
            tvt.BoundingBoxes([[1.0, 2, 3, 4, 5]], format="XYWHR", canvas_size=(10, 20), dtype=torch.int64)


# ---- against torchvision 0.26 -----------------------------------------------------------------

def _detection(t, preset):
    """torchvision's detection reference presets (references/detection/presets.py, v2)."""
    mean = (123, 117, 104)
    if preset == "hflip":
        ops = [t.RandomHorizontalFlip(p=0.5)]
    elif preset == "multiscale":
        ops = [t.RandomShortestSize(min_size=(96, 112, 128, 144, 160), max_size=256), t.RandomHorizontalFlip(p=0.5)]
    elif preset == "ssd":
        ops = [t.RandomPhotometricDistort(p=1), t.RandomZoomOut(fill={tvt.Image: mean, "others": 0}),
               t.RandomIoUCrop(), t.RandomHorizontalFlip(p=0.5)]
    elif preset == "lsj":
        ops = [t.ScaleJitter(target_size=(128, 128), antialias=True), t.RandomCrop(128, pad_if_needed=True),
               t.RandomHorizontalFlip(p=0.5)]
    else:  # geometric: the warps (a rotation with expand last: torchvision leaves boxes on a
        # canvas a pixel off the image's after it, which a later draw refuses)
        ops = [t.RandomAffine(degrees=20, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=5),
               t.RandomPerspective(0.3, p=0.7), t.RandomRotation(15, expand=True)]
    return t.Compose(ops + [t.ToDtype(torch.float, scale=True), t.ConvertBoundingBoxFormat("XYXY"),
                            t.SanitizeBoundingBoxes(), t.ToPureTensor()])


def _segmentation(t):
    """A segmentation training preset: RandomResize, flip, RandomCrop(pad_if_needed) with 255
    in the masks' padding, then dtypes by type and Normalize."""
    return t.Compose([t.RandomResize(min_size=64, max_size=160), t.RandomHorizontalFlip(0.5),
                      t.RandomCrop(96, pad_if_needed=True, fill={tvt.Mask: 255, "others": 0}),
                      t.ToDtype({tvt.Image: torch.float32, tvt.Mask: torch.int64, "others": None}, scale=True),
                      t.Normalize(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)), t.ToPureTensor()])


def _to_cpu(x):
    if isinstance(x, dict):
        return {k: _to_cpu(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_to_cpu(v) for v in x)
    return x.to("cpu") if isinstance(x, torch.Tensor) else x  # .to keeps a tv_tensor's type


@needs_torch
@needs_v2
class AgainstTorchvision(unittest.TestCase):
    def same(self, got, want, what):
        self.assertEqual(type(got), type(want), what)
        if isinstance(want, dict):
            self.assertEqual(list(got), list(want), what)
            for k in want:
                self.same(got[k], want[k], "%s[%s]" % (what, k))
        elif isinstance(want, (tuple, list)):
            self.assertEqual(len(got), len(want), what)
            for i, (g, w) in enumerate(zip(got, want)):
                self.same(g, w, "%s[%d]" % (what, i))
        elif isinstance(want, torch.Tensor):
            self.assertEqual(tuple(got.shape), tuple(want.shape), what)
            self.assertEqual(got.dtype, want.dtype, what)
            if want.dtype == torch.uint8 or not want.is_floating_point():
                self.assertTrue(torch.equal(got, want), "%s: %d differ" % (what, int((got != want).sum())))
            else:
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4, msg=lambda m: "%s: %s" % (what, m))
            if isinstance(want, tvt.BoundingBoxes):
                self.assertEqual(tuple(got.canvas_size), tuple(want.canvas_size), what)
        else:
            self.assertEqual(got, want, what)

    def run_both(self, make_pipeline, samples, what, tuple_form=False):
        """toroid on the samples where they are (CPU or CUDA) against torchvision on CPU copies:
        torchvision's CUDA resizes are off by a few levels where its CPU kernels are exact; the
        draws come from torch's CPU generator either way."""
        ours, theirs = make_pipeline(T), make_pipeline(TV2)
        for i, s in enumerate(samples):
            args = (s["image"], {k: v for k, v in s.items() if k != "image"}) if tuple_form else (s,)
            torch.manual_seed(100 + i)
            want = theirs(*_to_cpu(copy.deepcopy(args)))
            state = torch.get_rng_state()
            torch.manual_seed(100 + i)
            got = _to_cpu(ours(*copy.deepcopy(args)))
            self.same(got, want, "%s sample %d" % (what, i))
            self.assertTrue(torch.equal(torch.get_rng_state(), state), "%s sample %d: generator state" % (what, i))

    def test_detection_presets(self):
        for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
            for preset in ("hflip", "multiscale", "ssd", "lsj", "geometric"):
                samples = [make_sample(i, device=device, int_boxes=(i % 3 == 0)) for i in range(12)]
                self.run_both(lambda t: _detection(t, preset), samples, "%s %s" % (preset, device),
                              tuple_form=True)

    def test_segmentation_preset(self):
        for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
            samples = [make_sample(i, device=device, instance_masks=False) for i in range(12)]
            self.run_both(_segmentation, samples, "segmentation %s" % device)

    def test_keypoints_and_box_formats_through_warps(self):
        def pipeline(t):
            return t.Compose([t.RandomAffine(degrees=30, translate=(0.1, 0.2), scale=(0.7, 1.3), shear=(-5, 5, -3, 3)),
                              t.RandomRotation(40), t.RandomPerspective(0.4, p=1.0),
                              t.RandomResizedCrop(64, antialias=True), t.RandomVerticalFlip(0.5), t.Pad(3),
                              t.RandomRotation(180, expand=True)])
        samples = []
        for i in range(12):
            s = make_sample(i)
            h, w = s["boxes"].canvas_size
            fmt = ("XYXY", "XYWH", "CXCYWH")[i % 3]
            s["boxes"] = TV2.functional.convert_bounding_box_format(s["boxes"], new_format=fmt)
            g = torch.Generator().manual_seed(i)
            s["points"] = tvt.KeyPoints(torch.rand(4, 2, generator=g) * torch.tensor([w - 1, h - 1]), canvas_size=(h, w))
            samples.append(s)
        self.run_both(pipeline, samples, "warps")


if __name__ == "__main__":
    unittest.main()

"""MixUp and CutMix (toroid.transforms._mix): what each computes on a batch and its labels,
the draws from torch's default generator, torchvision's checks; and where torchvision.
transforms.v2 is installed (the GPU machine: torchvision 0.26), the same tensors and the same
generator state as torchvision's under one seed, on CPU and CUDA tensors."""

import unittest

import toroid
import toroid.transforms as T

from support import TV2, needs_torch, needs_v2, torch


def batch(n=4, c=3, h=10, w=13, dtype=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, c, h, w, generator=g)
    return x if dtype is None else (x * 255).to(dtype)


@needs_torch
class MixUpAndCutMix(unittest.TestCase):
    def test_mixup_mixes_each_image_with_the_one_before(self):
        x, y = batch(), torch.tensor([0, 2, 1, 4])
        torch.manual_seed(3)
        got_x, got_y = T.MixUp(num_classes=5)(x, y)
        torch.manual_seed(3)
        lam = float(torch.distributions.Beta(torch.tensor([1.0]), torch.tensor([1.0])).sample(()))
        self.assertTrue(0.0 <= lam <= 1.0)
        # Two roundings, as PyTorch's mul_ then add_: not a fused multiply-add.
        want = (x.roll(1, 0) * (1.0 - lam)) + x * lam
        self.assertTrue(torch.equal(got_x, want))
        one_hot = torch.nn.functional.one_hot(y, 5).float()
        self.assertTrue(torch.equal(got_y, one_hot.roll(1, 0) * (1.0 - lam) + one_hot * lam))
        self.assertTrue(torch.allclose(got_y.sum(1), torch.ones(4)))

    def test_cutmix_pastes_a_box_of_the_image_before(self):
        x, y = batch(dtype=torch.uint8), torch.tensor([0, 2, 1, 4])
        for seed in range(20):
            torch.manual_seed(seed)
            got_x, got_y = T.CutMix(num_classes=5, alpha=0.7)(x, y)
            inside = got_x != x
            rolled = x.roll(1, 0)
            # Every changed pixel is the image before's, in one rectangle shared by the batch.
            self.assertTrue(torch.equal(got_x[inside], rolled[inside]))
            rows = inside.any(0).any(0).any(1).nonzero().flatten()
            cols = inside.any(0).any(0).any(0).nonzero().flatten()
            if len(rows):
                box = got_x[..., rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
                self.assertTrue(torch.equal(box, rolled[..., rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]))
            # The labels weigh the two images by the area each shows.
            area = ((rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)).item() if len(rows) else 0
            self.assertLessEqual(area / (10 * 13), 1.0)
            self.assertTrue(torch.allclose(got_y.sum(1), torch.ones(4)))

    def test_dict_samples_and_a_labels_getter(self):
        x, y = batch(), torch.tensor([1, 0, 1, 0])
        torch.manual_seed(0)
        out = T.MixUp(num_classes=2)({"image": x, "label": y, "id": 7})
        torch.manual_seed(0)
        img, lab = T.MixUp(num_classes=2)(x, y)
        self.assertTrue(torch.equal(out["image"], img) and torch.equal(out["label"], lab))
        self.assertEqual(out["id"], 7)
        torch.manual_seed(0)
        out = T.MixUp(num_classes=2, labels_getter=lambda s: s[1])((x, y))
        self.assertTrue(torch.equal(out[0], img))
        # 2-D (probability) labels need no num_classes.
        probs = torch.nn.functional.one_hot(y, 2).float()
        torch.manual_seed(0)
        _, mixed = T.MixUp()(x, probs)
        self.assertTrue(torch.equal(mixed, lab))

    def test_bad_input_is_a_clear_error(self):
        x, y = batch(), torch.tensor([0, 1, 2, 3])
        with self.assertRaisesRegex(toroid.Error, "num_classes must be passed"):
            T.MixUp()(x, y)
        with self.assertRaisesRegex(toroid.Error, "does not match the batch size of the labels: 4 != 3"):
            T.MixUp(num_classes=4)(x, y[:3])
        with self.assertRaisesRegex(toroid.Error, "Expected a batched input with 4 dims, but got 3"):
            T.CutMix(num_classes=4)(x[0], y)
        with self.assertRaisesRegex(toroid.Error, "labels should be index based"):
            T.MixUp(num_classes=4)(x, y[None, None])
        with self.assertRaisesRegex(toroid.Error, "must match num_classes: 4 != 5"):
            T.CutMix(num_classes=5)(x, torch.zeros(4, 4))
        with self.assertRaisesRegex(TypeError, "MixUp mixes float images"):
            T.MixUp(num_classes=4)(batch(dtype=torch.uint8), y)
        with self.assertRaisesRegex(toroid.Error, "labels_getter should either be"):
            T.MixUp(num_classes=4, labels_getter="labels")
        with self.assertRaisesRegex(toroid.Error, "The labels must be a tensor"):
            T.MixUp(num_classes=4, labels_getter=lambda s: [0, 1, 2, 3])(x, y)


@needs_v2
class AgainstTorchvision(unittest.TestCase):
    def check(self, mine, theirs, inputs):
        for seed in range(6):
            torch.manual_seed(seed)
            got = mine(*inputs)
            state = torch.get_rng_state()
            torch.manual_seed(seed)
            want = theirs(*inputs)
            self.assertTrue(torch.equal(state, torch.get_rng_state()), "generator state after the draws")
            for g, w in zip(got, want):
                self.assertEqual(g.dtype, w.dtype)
                self.assertTrue(torch.equal(g, w), "seed %d" % seed)

    def test_same_tensors_as_torchvision(self):
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for device in devices:
            y = torch.tensor([3, 0, 1, 4, 2], device=device)
            xf = batch(n=5, h=17, w=9).to(device)
            xu = batch(n=5, h=17, w=9, dtype=torch.uint8).to(device)
            for alpha in (1.0, 0.2):
                self.check(T.MixUp(alpha=alpha, num_classes=5), TV2.MixUp(alpha=alpha, num_classes=5), (xf, y))
                for x in (xf, xu):
                    self.check(T.CutMix(alpha=alpha, num_classes=5), TV2.CutMix(alpha=alpha, num_classes=5), (x, y))
            probs = torch.nn.functional.one_hot(y, 5).float()
            self.check(T.MixUp(), TV2.MixUp(), (xf, probs))


if __name__ == "__main__":
    unittest.main()

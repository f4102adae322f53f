"""Training recipes as toroid.transforms Compose objects, with the parameters their reference
implementations use (torchvision's classification and segmentation references, timm's
rand-m9, SimCLR). Each builder takes the transforms module to build from: toroid.transforms
(the default) or torchvision.transforms.v2, which take the same arguments, so a recipe can be
checked or timed against torchvision under the same seeds.

    import toroid.transforms.recipes as R
    train = R.build("resnet50")            # toroid.transforms
    ref = R.build("resnet50", torchvision.transforms.v2)
"""

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def _module(T):
    if T is None:
        import toroid.transforms as T
    return T


def _to_float(T):
    import torch
    return [T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]


def resnet50(T=None, crop=176):
    """torchvision's ResNet-50 recipe (references/classification, the "new" recipe):
    RandomResizedCrop(176), flip, TrivialAugmentWide (bilinear), float, normalize,
    RandomErasing(0.1)."""
    T = _module(T)
    return T.Compose([T.RandomResizedCrop(crop, antialias=True), T.RandomHorizontalFlip(),
                      T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR)] + _to_float(T) +
                     [T.RandomErasing(0.1)])


def rand_m9(T=None, crop=224):
    """timm's rand-m9 recipe with torchvision's RandAugment: RandomResizedCrop(224, bicubic),
    flip, RandAugment(2, 9), float, normalize."""
    T = _module(T)
    return T.Compose([T.RandomResizedCrop(crop, interpolation=T.InterpolationMode.BICUBIC, antialias=True),
                      T.RandomHorizontalFlip(), T.RandAugment(2, 9)] + _to_float(T))


def autoaugment(T=None, crop=224):
    """AutoAugment's ImageNet policy after RandomResizedCrop(224) and a flip; float,
    normalize."""
    T = _module(T)
    return T.Compose([T.RandomResizedCrop(crop, antialias=True), T.RandomHorizontalFlip(),
                      T.AutoAugment(T.AutoAugmentPolicy.IMAGENET)] + _to_float(T))


def simclr(T=None, crop=224):
    """The SimCLR / DINO view: RandomResizedCrop(scale 0.05-0.4), flip, ColorJitter(0.4, 0.4,
    0.2, 0.1) with p 0.8, RandomGrayscale(0.2), GaussianBlur(23, sigma 0.1-2) with p 0.5,
    RandomSolarize(128, 0.2); float, normalize."""
    T = _module(T)
    return T.Compose([T.RandomResizedCrop(crop, scale=(0.05, 0.4), antialias=True), T.RandomHorizontalFlip(),
                      T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), T.RandomGrayscale(0.2),
                      T.RandomApply([T.GaussianBlur(23, sigma=(0.1, 2.0))], p=0.5),
                      T.RandomSolarize(128, p=0.2)] + _to_float(T))


def segmentation(T=None, base_size=520, crop=480):
    """torchvision's segmentation reference (the image's part): RandomResize(0.5 to 2 x the
    base size), flip, RandomCrop(480, pad_if_needed); float, normalize."""
    T = _module(T)
    return T.Compose([T.RandomResize(int(0.5 * base_size), int(2.0 * base_size), antialias=True),
                      T.RandomHorizontalFlip(), T.RandomCrop(crop, pad_if_needed=True)] + _to_float(T))


RECIPES = {"resnet50": resnet50, "rand-m9": rand_m9, "autoaugment": autoaugment, "simclr": simclr,
           "segmentation": segmentation}


def build(name, T=None, **kwargs):
    """The recipe `name` (one of RECIPES) built from the transforms module T."""
    if name not in RECIPES:
        from .._capi import Error
        raise Error("unknown recipe %r (expected one of %s)" % (name, ", ".join(RECIPES)))
    return RECIPES[name](T, **kwargs)

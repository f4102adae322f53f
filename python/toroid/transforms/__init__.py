"""toroid.transforms: image-tensor transforms with torchvision.transforms.v2's names, arguments
and results. A Compose turns its transforms into one list of toroid ops per call and runs it as
one compiled pipeline; random transforms draw their parameters with torch's default generator
exactly as torchvision does and put them into the ops as run-time values (a bind, not a compile).

The functional forms (torchvision.transforms.v2.functional's names) are in
toroid.transforms.functional and importable from here too.

Each module below adds its transforms (TRANSFORMS) and functional forms (FUNCTIONAL):
_base holds the per-call state, Compose and the first geometric ops; _warp rotation and perspective;
_color the colour ops; _geometry padding, erasing and the crop family of training transforms;
_container RandomApply, RandomChoice, RandomOrder and Lambda; _blur GaussianBlur and sharpness;
_augment AutoAugment, RandAugment and TrivialAugmentWide; _convert ToImage, PILToTensor and
ToPureTensor; _mix the batch transforms MixUp and CutMix; _detection the detection transforms and
the box utilities. _sample moves a sample's masks, boxes and points with its image.
"""

from . import _augment, _base, _blur, _color, _container, _convert, _detection, _geometry, _mix, _warp
from ._base import *  # noqa: F401,F403
from ._warp import *  # noqa: F401,F403
from ._color import *  # noqa: F401,F403
from ._base import _wait_for_variants  # noqa: F401 - the programs compiling in the background
from ._container import *  # noqa: F401,F403
from ._geometry import *  # noqa: F401,F403
from ._blur import *  # noqa: F401,F403
from ._augment import *  # noqa: F401,F403
from ._convert import *  # noqa: F401,F403
from ._mix import *  # noqa: F401,F403
from ._detection import *  # noqa: F401,F403

_MODULES = (_base, _warp, _color, _geometry, _container, _blur, _augment, _convert, _mix, _detection)

__all__ = [name for m in _MODULES for name in m.TRANSFORMS + m.FUNCTIONAL] + ["functional"]

from . import functional  # noqa: E402

"""``ToPILImage`` / ``to_pil_image`` of an ndarray (patches/vision_transforms.py ``_array_to_pil``): torchvision 0.28's
mode rules for each dtype x channel count x requested mode -- the image's mode, size and bytes, or the same
exception and message. References: ``tests/fixtures/vision/pil_modes.json``, recorded with real torchvision 0.28 by
``tests/fixtures/vision/record_pil_modes.py`` (which imports :data:`CASES` and :func:`make_array` from here)."""
import itertools
import json
import os

import numpy as np

DTYPES = ["uint8", "int16", "int32", "int64", "float32", "float64"]
SHAPES = [(4, 5), (4, 5, 1), (4, 5, 2), (4, 5, 3), (4, 5, 4), (4, 5, 5), (2, 3, 4, 1)]
MODES = [None, "L", "F", "I;16", "LA", "RGB", "RGBA", "CMYK"]
CASES = list(itertools.product(DTYPES, SHAPES, MODES))
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "vision", "pil_modes.json")


def make_array(dtype, shape):
    """A fixed array: floats in [-0.5, 1.5) (out-of-range values wrap in the uint8 cast), integers spread over
    0..250."""
    steps = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    if dtype.startswith("float"):
        return ((steps * 0.37) % 2.0 - 0.5).astype(dtype)
    return ((steps * 37) % 251).astype(dtype)


def test_to_pil_image_of_arrays_follows_torchvision_mode_rules():
    import hashlib

    import torchvision.transforms.functional as F

    def outcome(array, mode):
        try:
            image = F.to_pil_image(array, mode)
        except Exception as exc:  # noqa: BLE001  (compared with the recorded exception)
            return [type(exc).__name__, str(exc)]
        return ["image", image.mode, list(image.size), hashlib.sha1(image.tobytes()).hexdigest()[:16]]

    with open(FIXTURE) as f:
        recorded = json.load(f)
    assert [(d, tuple(s), m) for d, s, m, _ in recorded] == CASES
    differ = [(d, s, m, want, got) for d, s, m, want in recorded
              for got in [outcome(make_array(d, tuple(s)), m)] if got != want]
    assert differ == [], differ[:5]

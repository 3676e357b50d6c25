"""``torchvision.transforms.v2`` (patches/transforms_v2.py): MindTorch 0.4.0 has no v2 (``import
torchvision.transforms.v2`` raised ``ModuleNotFoundError KeyError('torchvision.transforms.v2')``), so every test here
fails with ``ADAPTER_DISABLE_PATCHES=transforms_v2``.

Deterministic transforms are compared with real torchvision 0.28 (tests/fixtures/transforms_v2_reference.json,
recorded with ``.venv-ref/bin/python tests/fixtures/transforms_v2_cases.py --record``: shape, dtype, sum and a
position-weighted sum of each output, equal to 1e-9). Random transforms: shapes, dtypes, ranges and repeatability
under ``torch.manual_seed``. CutMix/MixUp: torchvision's formulas (``transforms/v2/_augment.py``) with a fixed lam.
"""
import json
import os
import sys

import numpy as np
import pytest

from support import ROOT, run_json

sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
import transforms_v2_cases  # noqa: E402

REFERENCE = json.load(open(transforms_v2_cases.REFERENCE))["cases"]


@pytest.fixture(scope="module")
def got():
    return transforms_v2_cases.cases()


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_deterministic_as_torchvision(got, case):
    ref, out = REFERENCE[case], got[case]
    assert (out["shape"], out["dtype"]) == (ref["shape"], ref["dtype"])
    tol = 1e-6 if case.endswith("_approx") else 1e-9
    assert out["sum"] == pytest.approx(ref["sum"], rel=tol, abs=tol)
    assert out["wsum"] == pytest.approx(ref["wsum"], rel=tol, abs=tol)


def test_imports_and_tv_tensors():
    import torch
    import torchvision.transforms.v2.functional as F
    from torchvision import tv_tensors
    from torchvision.transforms import v2
    assert v2.functional is F
    img = tv_tensors.Image(np.zeros((5, 6), np.uint8))
    assert tuple(img.shape) == (1, 5, 6) and img.dtype == torch.uint8
    assert F.get_size(img) == [5, 6]


def test_labels_pass_through():
    """v2 transforms the image of a sample and leaves labels alone: (image, int), dicts, bare images."""
    import torch
    from torchvision.transforms import v2
    fm, rgb, _ = transforms_v2_cases.inputs()
    t = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])
    x, y = t((fm, 7))
    assert y == 7 and tuple(x.shape) == (1, 28, 28) and x.dtype == torch.float32
    x2, y2 = t(fm, 7)  # two positional inputs, as v2 allows
    assert y2 == 7 and np.array_equal(x2.numpy(), x.numpy())
    d = v2.Resize(14, antialias=True)({"image": rgb, "label": 3, "name": "a"})
    assert d["label"] == 3 and d["name"] == "a" and d["image"].size == (16, 14)
    lab = torch.tensor([1, 2])
    img, same = v2.CenterCrop(8)((torch.zeros(3, 10, 10, dtype=torch.uint8), lab))
    assert same is lab and tuple(img.shape) == (3, 8, 8)
    assert float(x.max()) <= 1.0 and float(x.min()) >= 0.0


def _random_pipeline():
    import torch
    from torchvision.transforms import v2
    return v2.Compose([v2.RandomResizedCrop(24, antialias=True), v2.RandomHorizontalFlip(), v2.RandomRotation(10),
                       v2.ColorJitter(0.4, 0.4, 0.4), v2.RandomApply([v2.GaussianBlur(3)], p=0.5),
                       v2.TrivialAugmentWide(), v2.AutoAugment(), v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
                       v2.RandomErasing(p=1.0), v2.ToPureTensor()])


def test_random_transforms_shapes_ranges_and_seed():
    import torch
    from torchvision.transforms import v2
    _, rgb, _ = transforms_v2_cases.inputs()
    out = []
    for _ in range(2):
        torch.manual_seed(3)
        x, y = _random_pipeline()((rgb, 5))
        assert tuple(x.shape) == (3, 24, 24) and x.dtype == torch.float32 and y == 5
        assert 0.0 <= float(x.min()) and float(x.max()) <= 1.0
        out.append(x.numpy())
    assert np.array_equal(out[0], out[1])
    import pickle  # DataLoader spawn workers pickle the dataset and its transforms
    again = pickle.loads(pickle.dumps(_random_pipeline()))
    assert [type(t).__name__ for t in again.transforms][:3] == ["RandomResizedCrop", "RandomHorizontalFlip",
                                                                 "RandomRotation"]
    torch.manual_seed(3)
    assert np.array_equal(again((rgb, 5))[0].numpy(), out[0])
    rrc = v2.RandomResizedCrop((12, 14), antialias=True)(v2.ToImage()(rgb))
    assert tuple(rrc.shape) == (3, 12, 14) and rrc.dtype == torch.uint8
    crop = v2.RandomCrop(32, padding=4)(v2.ToImage()(rgb.resize((32, 32))))
    assert tuple(crop.shape) == (3, 32, 32) and crop.dtype == torch.uint8
    assert v2.Grayscale()(v2.RandomCrop(16)(rgb)).mode == "L"
    lam = v2.Lambda(lambda im: im.flip(-1))(torch.arange(6).reshape(1, 2, 3))
    assert lam.tolist() == [[[2, 1, 0], [5, 4, 3]]]


def test_mixup_cutmix_formula(monkeypatch):
    """torchvision's formulas with lam fixed at 0.36: MixUp ``roll(1) * 0.64 + x * 0.36``; CutMix with centre (5, 5)
    on 10x10: half-sides ``int(0.5 * sqrt(0.64) * 10) = 4``, box x, y in [1, 9), ``lam_adjusted = 1 - 64/100``."""
    import torch
    from torchvision.transforms import v2
    import patches.transforms_v2 as tv2
    monkeypatch.setattr(tv2, "_draw_beta", lambda alpha: 0.36)
    monkeypatch.setattr(tv2.np.random, "randint", lambda n: 5)
    rs = np.random.RandomState(0)
    x = rs.rand(4, 3, 10, 10).astype(np.float32)
    labels = np.array([0, 3, 3, 9])
    onehot = np.eye(10, dtype=np.float32)[labels]
    mixed_lab = np.roll(onehot, 1, 0) * np.float32(0.64) + onehot * np.float32(0.36)
    xm, ym = v2.MixUp(num_classes=10)(torch.from_numpy(x), torch.from_numpy(labels))
    np.testing.assert_allclose(xm.numpy(), np.roll(x, 1, 0) * 0.64 + x * 0.36, rtol=1e-6)
    np.testing.assert_allclose(ym.numpy(), mixed_lab, rtol=1e-6)
    np.testing.assert_allclose(ym.numpy().sum(1), 1.0, rtol=1e-6)
    xc, yc = v2.CutMix(num_classes=10)(torch.from_numpy(x), torch.from_numpy(labels))
    want = x.copy()
    want[..., 1:9, 1:9] = np.roll(x, 1, 0)[..., 1:9, 1:9]
    np.testing.assert_array_equal(xc.numpy(), want)
    np.testing.assert_allclose(yc.numpy(), mixed_lab, rtol=1e-6)  # lam_adjusted = 1 - 64/100 = 0.36
    with pytest.raises(ValueError, match="num_classes must be passed"):
        v2.MixUp()(torch.from_numpy(x), torch.from_numpy(labels))


def test_random_choice_cutmix_or_mixup_batch():
    import torch
    from torchvision.transforms import v2
    t = v2.RandomChoice([v2.CutMix(num_classes=5), v2.MixUp(num_classes=5)])
    torch.manual_seed(0)
    x, y = t(torch.rand(6, 3, 8, 8), torch.tensor([0, 1, 2, 3, 4, 0]))
    assert tuple(x.shape) == (6, 3, 8, 8) and tuple(y.shape) == (6, 5) and y.dtype == torch.float32
    np.testing.assert_allclose(y.numpy().sum(1), 1.0, rtol=1e-6)


def test_missing_name_names_the_callers_line():
    from torchvision.transforms import v2
    with pytest.raises(AttributeError, match=r"test_transforms_v2.py:\d+: torchvision.transforms.v2.JPEG is not "
                                             r"provided"):
        v2.JPEG  # noqa: B018
    from torchvision.transforms.v2 import functional as F
    with pytest.raises(AttributeError, match=r"test_transforms_v2.py:\d+: .*v2.functional.jpeg"):
        F.jpeg  # noqa: B018


def test_training_script_with_v2_pipeline_runs_compiled():
    """tests/fixtures/transforms_v2_train.py through run.py: trains (first loss ~ln 10, the last un-mixed losses
    lower), mixed targets sum to 1 per row, and the step compiles."""
    result, err = run_json("--explain", "--original", "tests/fixtures/transforms_v2_train.py", "data", "30")
    losses = result["losses"]
    assert len(losses) == 30 and abs(losses[0] - np.log(10)) < 0.3
    assert np.mean(losses[-10::2]) < losses[0] - 0.3
    assert result["data"][0] == [32, 1, 28, 28]
    assert result["mixed_target"][0] == [32, 10] and result["mixed_target"][2] == pytest.approx(32.0, rel=1e-5)
    assert "compiled (graph mode, fused with optimizer.step()" in err

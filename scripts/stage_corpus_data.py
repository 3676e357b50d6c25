"""Stage real data for the pytorch/examples corpus (a checkout named by ``CORPUS_EXAMPLES``) from the real
Fashion-MNIST.

numpy and Pillow only; idempotent (a folder already staged with the same sizes is left as it is: a stamp file holds
the sizes and the source files' sizes). Nothing is downloaded: the source is this repository's
``data/FashionMNIST/raw/`` (``make data``) or Debian's ``/usr/share/datasets/fashion-mnist/*.gz``.

Layout under ``--out BASE`` (the scripts find their data relative to their working directory, so each run gets a
folder ``BASE/<run>/`` made by :func:`make_run_dir`, beside the staged folders)::

    BASE/data/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte
                                 the first ``train`` / ``test`` Fashion-MNIST examples as MNIST's raw IDX files
                                 (torchvision's ``MNIST(root)`` reads ``root/MNIST/raw``; mnist, vae, mnist_rnn,
                                 siamese_network and dcgan read ``'../data'``, mnist_forward_forward ``'./data/'``)
    BASE/imagenet/{train,val}/<class>/<i>.png
                                 an ImageFolder for imagenet/main.py: ``imagenet_train`` / ``imagenet_val`` images per
                                 class (28x28 grey PNGs; the script's transforms resize them to 224 px), from
                                 Fashion-MNIST's train / test split; folder names ``<label>_<class name>``
    BASE/data/text/input.txt     the training text of ``pt_original/train_gpt.py`` (``scripts/stage_text_data.py``:
                                 local licence texts)
    BASE/dataset/BSDS300/images/{train,test}/<i>.png
                                 for super_resolution (its ``data.py`` downloads BSDS300 into ``./dataset`` unless
                                 ``dataset/BSDS300/images`` exists): Fashion-MNIST images upscaled to
                                 ``bsds_size`` px (bicubic), RGB, ``bsds_train`` / ``bsds_test`` of them

A run folder ``BASE/<run>/`` gets links ``data -> ../data`` and ``dataset -> ../dataset``, so ``'../data'``,
``'./data/'`` and ``./dataset`` all resolve. time_sequence_prediction's ``traindata.pt`` is made by its own
``generate_sine_wave.py`` (it needs torch: the tests run it through run.py, the golden recorder under real PyTorch).

    .venv/bin/python scripts/stage_corpus_data.py --out runs/corpus [--train 2048 --test 1000]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import struct
import sys
from typing import Dict, Optional, Tuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stage_text_data  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = (os.path.join(ROOT, "data", "FashionMNIST", "raw"), "/usr/share/datasets/fashion-mnist")
FILES = {"train_images": "train-images-idx3-ubyte", "train_labels": "train-labels-idx1-ubyte",
         "test_images": "t10k-images-idx3-ubyte", "test_labels": "t10k-labels-idx1-ubyte"}
# torchvision.datasets.FashionMNIST.classes, '/' replaced (a folder name)
CLASSES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle_boot"]
# Defaults used by tests/test_corpus.py, bench/corpus_bench.py and scripts/record_corpus_goldens.py (one staging).
DEFAULT_SIZES = {"train": 2048, "test": 1000, "imagenet_train": 4, "imagenet_val": 2, "bsds_train": 16,
                 "bsds_test": 10, "bsds_size": 256}
STAMP = ".staged.json"
PARTS = ("data", "imagenet", "dataset")  # the staged folders under BASE


def _source_path(name: str) -> str:
    for folder in SOURCES:
        for candidate in (os.path.join(folder, name), os.path.join(folder, name + ".gz")):
            if os.path.exists(candidate):
                return candidate
    raise FileNotFoundError(f"stage_corpus_data: Fashion-MNIST file {name} not found in {' or '.join(SOURCES)} "
                            "(run 'make data', or install Debian's dataset-fashion-mnist)")


def read_idx(path: str) -> np.ndarray:
    """An IDX file (optionally gzipped) as a uint8 array: (N, 28, 28) images or (N,) labels.

    Format (yann.lecun.com/exdb/mnist): big-endian magic ``0x00000800 | ndim`` (type 0x08 = unsigned byte), then
    ``ndim`` big-endian int32 sizes, then the bytes. Raises ValueError on another type or a short file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    magic = struct.unpack(">I", raw[:4])[0]
    if magic >> 8 != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    ndim = magic & 0xFF
    shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {data.size} bytes of data for shape {shape}")
    return data.reshape(shape)


def write_idx(path: str, array: np.ndarray) -> None:
    """Write a uint8 array as an (uncompressed) IDX file, the inverse of :func:`read_idx`."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x0800 | array.ndim))
        f.write(struct.pack(f">{array.ndim}I", *array.shape))
        f.write(array.tobytes())


def load_fashion_mnist() -> Dict[str, np.ndarray]:
    """The four Fashion-MNIST arrays (uint8): train/test images (N, 28, 28) and labels (N,)."""
    return {key: read_idx(_source_path(name)) for key, name in FILES.items()}


def _per_class(labels: np.ndarray, k: int) -> Dict[int, np.ndarray]:
    """The indices of the first ``k`` examples of each class (in file order)."""
    return {c: np.flatnonzero(labels == c)[:k] for c in range(10)}


def _stage_mnist(out: str, arrays: Dict[str, np.ndarray], train: int, test: int) -> None:
    raw = os.path.join(out, "MNIST", "raw")
    os.makedirs(raw)
    for split, n in (("train", train), ("test", test)):
        write_idx(os.path.join(raw, FILES[f"{split}_images"]), arrays[f"{split}_images"][:n])
        write_idx(os.path.join(raw, FILES[f"{split}_labels"]), arrays[f"{split}_labels"][:n])


def _stage_imagenet(out: str, arrays: Dict[str, np.ndarray], n_train: int, n_val: int) -> None:
    from PIL import Image
    for folder, split, k in (("train", "train", n_train), ("val", "test", n_val)):
        for c, idx in _per_class(arrays[f"{split}_labels"], k).items():
            cdir = os.path.join(out, folder, f"{c}_{CLASSES[c]}")
            os.makedirs(cdir)
            for i in idx:
                Image.fromarray(arrays[f"{split}_images"][i], mode="L").save(os.path.join(cdir, f"{i:05d}.png"))


def _stage_bsds(out: str, arrays: Dict[str, np.ndarray], n_train: int, n_test: int, size: int) -> None:
    from PIL import Image
    for folder, split, n in (("train", "train", n_train), ("test", "test", n_test)):
        d = os.path.join(out, "BSDS300", "images", folder)
        os.makedirs(d)
        for i in range(n):
            img = Image.fromarray(arrays[f"{split}_images"][i], mode="L").resize((size, size), Image.BICUBIC)
            img.convert("RGB").save(os.path.join(d, f"{i:05d}.png"))


def stage(out: str, sizes: Optional[Dict[str, int]] = None) -> str:
    """Stage everything under ``out`` (see the module docstring); return ``out``. Idempotent: when ``out`` holds a
    staging with the same ``sizes`` and source, nothing is written. Parts are built in a temporary folder and renamed,
    so an interrupted staging leaves nothing half-written.

    Args:
        out: the base folder (created).
        sizes: overrides of :data:`DEFAULT_SIZES` (train/test: MNIST examples; imagenet_train/val: images per class;
            bsds_train/test: images; bsds_size: their side in px).
    Raises:
        FileNotFoundError: no Fashion-MNIST source; ValueError: a bad size.
    """
    sizes = dict(DEFAULT_SIZES, **(sizes or {}))
    for key, value in sizes.items():
        if key not in DEFAULT_SIZES or int(value) < 1:
            raise ValueError(f"stage_corpus_data: bad size {key}={value}")
    want = {"sizes": sizes, "source": {k: os.path.getsize(_source_path(n)) for k, n in FILES.items()},
            "text_sha256": hashlib.sha256(stage_text_data.build_text().encode("utf-8")).hexdigest()}
    stamp = os.path.join(out, STAMP)
    if os.path.exists(stamp) and all(os.path.isdir(os.path.join(out, part)) for part in PARTS):
        with open(stamp) as f:
            if json.load(f) == want:
                return out
    os.makedirs(out, exist_ok=True)
    arrays = load_fashion_mnist()
    if sizes["train"] > len(arrays["train_labels"]) or sizes["test"] > len(arrays["test_labels"]):
        raise ValueError(f"stage_corpus_data: at most {len(arrays['train_labels'])} / {len(arrays['test_labels'])}")
    def _stage_data(d):
        _stage_mnist(d, arrays, sizes["train"], sizes["test"])
        stage_text_data.stage_text(os.path.join(d, "text", "input.txt"))  # pt_original/train_gpt.py's text

    parts = (("data", _stage_data),
             ("imagenet", lambda d: _stage_imagenet(d, arrays, sizes["imagenet_train"], sizes["imagenet_val"])),
             ("dataset", lambda d: _stage_bsds(d, arrays, sizes["bsds_train"], sizes["bsds_test"], sizes["bsds_size"])))
    for name, build in parts:
        tmp = os.path.join(out, f".{name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        build(tmp)
        final = os.path.join(out, name)
        if os.path.exists(final):
            shutil.rmtree(final)
        os.rename(tmp, final)
    with open(stamp + ".tmp", "w") as f:
        json.dump(want, f)
    os.replace(stamp + ".tmp", stamp)
    return out


def make_run_dir(base: str, name: str) -> str:
    """A fresh working folder ``base/name`` for one corpus run, with ``data`` and ``dataset`` linked to the staged
    ones (so ``'../data'``, ``'./data/'`` and ``./dataset`` resolve). An existing folder of that name is replaced.
    Raises ValueError for a name that is one of the staged folders (``imagenet``!) or not a plain name."""
    if name in PARTS or name.startswith(".") or os.sep in name:
        raise ValueError(f"make_run_dir: {name!r} is not a run folder name (staged: {', '.join(PARTS)})")
    run = os.path.join(base, name)
    shutil.rmtree(run, ignore_errors=True)
    os.makedirs(run)
    for link in ("data", "dataset"):
        os.symlink(os.path.join("..", link), os.path.join(run, link))
    return run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="base folder")
    for key, value in DEFAULT_SIZES.items():
        p.add_argument("--" + key.replace("_", "-"), type=int, default=value, dest=key)
    args = p.parse_args(argv)
    sizes = {k: getattr(args, k) for k in DEFAULT_SIZES}
    print(stage(args.out, sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())

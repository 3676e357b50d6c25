"""Stage the training text of ``pt_original/train_gpt.py``: ``data/text/input.txt``, from local licence texts.

Nothing is downloaded. The text is the concatenation, in the order of :data:`LICENSES`, of licence files that
Debian's ``base-files`` package installs on every Debian and Ubuntu machine under ``/usr/share/common-licenses``
(about 110 KB of English text, a vocabulary of about 90 characters). Each file is read as UTF-8 and ends with one
newline before the next; the result is the same bytes on every machine with these files (its SHA-256 is printed and
kept in the goldens, ``tests/fixtures/corpus/gpt.json``, so that a machine with different texts is told so instead of
failing a loss comparison).

    .venv/bin/python scripts/stage_text_data.py [--out data/text/input.txt]

Idempotent: an existing file with the same content is left untouched.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from typing import Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LICENSE_DIR = "/usr/share/common-licenses"
# Plain files (not the GPL/LGPL/GFDL links) whose text has not changed in base-files for years.
LICENSES = ("GPL-3", "GPL-2", "LGPL-2.1", "Apache-2.0", "Artistic", "BSD")
DEFAULT_OUT = os.path.join(ROOT, "data", "text", "input.txt")


def build_text(license_dir: str = LICENSE_DIR) -> str:
    """The training text: the licence files of :data:`LICENSES` joined, each ending in exactly one newline.
    Raises FileNotFoundError naming the missing file (and the Debian package that installs it)."""
    parts = []
    for name in LICENSES:
        path = os.path.join(license_dir, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"stage_text_data: {path} not found (Debian's base-files package installs it)")
        with open(path, encoding="utf-8") as f:
            parts.append(f.read().rstrip("\n") + "\n")
    return "".join(parts)


def stage_text(out: str = DEFAULT_OUT) -> Tuple[str, str]:
    """Write the text to ``out`` unless it already holds it; return (``out``, the text's SHA-256 hex digest)."""
    text = build_text().encode("utf-8")
    digest = hashlib.sha256(text).hexdigest()
    if os.path.isfile(out):
        with open(out, "rb") as f:
            if f.read() == text:
                return out, digest
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    tmp = f"{out}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, out)
    return out, digest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=DEFAULT_OUT)
    args = p.parse_args(argv)
    path, digest = stage_text(args.out)
    print(f"{path} sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

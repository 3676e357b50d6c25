#!/usr/bin/env bash
# Idempotent set-up of the reference environment .venv-ref: Python 3.11, real PyTorch 2.13.0 (CPU), torchvision.
#
# Why torchvision needs a trick: PyPI has no CPU build of torchvision. The wheel paired with torch 2.13.0
# (torchvision 0.28.0) is CUDA-built; next to the CPU torch its C++ extensions (_C.so: detection ops such as nms,
# roi_align; image.so: JPEG/PNG decoding) fail to load, and its import then dies registering fake kernels for
# torchvision::nms/qnms. Everything a training script uses from it (datasets, transforms on PIL images, models) is
# pure Python. So: install it with --no-deps, delete the two CUDA-linked extensions, and let
# app/tools/parity/reference.py declare the two operator schemas before the script imports torchvision. Detection
# ops then raise if called; scripts that do not import torchvision are unaffected.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCHVISION=torchvision==0.28.0
stamp=.venv-ref/.requirements.sha256
want=$( (cat requirements-reference.txt; echo "$TORCHVISION") | sha256sum | cut -d' ' -f1)
if [ -x .venv-ref/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi

find_python311() {
  if command -v python3.11 >/dev/null 2>&1; then command -v python3.11; return; fi
  if command -v pyenv >/dev/null 2>&1; then
    for p in "$(pyenv root)"/versions/3.11.*/bin/python; do [ -x "$p" ] && { echo "$p"; return; }; done
  fi
  return 1
}

if [ ! -x .venv-ref/bin/python ]; then
  py=$(find_python311) || { echo "setup_reference: Python 3.11 not found (torch 2.13.0 CPU is a Python 3.11 wheel here)." >&2; exit 1; }
  echo "setup_reference: creating .venv-ref with $py"
  "$py" -m venv .venv-ref
fi
echo "setup_reference: installing real PyTorch into .venv-ref (a minute or two the first time)"
.venv-ref/bin/python -m pip install -q --disable-pip-version-check -r requirements-reference.txt
.venv-ref/bin/python -m pip install -q --disable-pip-version-check --no-deps "$TORCHVISION"
site=$(.venv-ref/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$site"/torchvision/_C.so "$site"/torchvision/image.so
echo "$want" > "$stamp"
echo "setup_reference: .venv-ref ready ($(.venv-ref/bin/python -c 'import torch; print("torch", torch.__version__)'))"

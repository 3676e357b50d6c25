#!/usr/bin/env bash
# Idempotent set-up: the Python 3.10 venv in .venv with requirements.txt, and the real Fashion-MNIST staged in
# data/FashionMNIST/raw/ (where torchvision.datasets.FashionMNIST(root="data") reads it). Fast when already done.
#   scripts/setup.sh          venv + data
#   scripts/setup.sh venv     venv only
#   scripts/setup.sh data     data only
#   scripts/setup.sh timm     venv + the optional timm (requirements-timm.txt, pip --no-deps), also into .venv-ref
#                             when it exists (tests/test_timm.py's references were recorded there)
# Another supported MindSpore (issue 17): MINDSPORE=<version> builds .venv-mindspore-<version> (next to .venv, which
# stays the tested default stack) from requirements-mindspore-<version>.txt, e.g.
#   MINDSPORE=2.10.0 scripts/setup.sh venv      -> .venv-mindspore-2.10.0 (mindspore 2.10.0, mindtorch 0.4.0)
# Run a script on it with .venv-mindspore-2.10.0/bin/python run.py ... (VENV=.venv-mindspore-2.10.0 for the Makefile).
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
if [ -n "${MINDSPORE:-}" ]; then
  venv=".venv-mindspore-$MINDSPORE"
  requirements="requirements-mindspore-$MINDSPORE.txt"
  if [ ! -f "$requirements" ]; then
    echo "setup: MINDSPORE=$MINDSPORE is not a supported version (no $requirements; supported:" \
         "$(ls requirements-mindspore-*.txt 2>/dev/null | sed 's/requirements-mindspore-//; s/\.txt$//' | tr '\n' ' '))" >&2
    exit 2
  fi
else
  venv=.venv
  requirements=requirements.txt
fi

find_python310() {
  if command -v python3.10 >/dev/null 2>&1 && python3.10 -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then
    command -v python3.10; return
  fi
  if command -v pyenv >/dev/null 2>&1; then
    for p in "$(pyenv root)"/versions/3.10.*/bin/python; do
      [ -x "$p" ] && { echo "$p"; return; }
    done
  fi
  return 1
}

setup_venv() {
  local stamp="$venv/.requirements.sha256" want
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return
  fi
  if [ ! -x "$venv/bin/python" ]; then
    local py
    py=$(find_python310) || { echo "setup: Python 3.10 not found (looked for python3.10 on PATH and \$(pyenv root)/versions/3.10.*)." >&2
                             echo "setup: MindSpore 2.5 / MindTorch 0.4 need Python 3.10; install it (e.g. 'pyenv install 3.10.13')." >&2; exit 1; }
    echo "setup: creating $venv with $py"
    "$py" -m venv "$venv"
  fi
  echo "setup: installing $requirements into $venv (MindSpore is ~3 GB; a few minutes the first time)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  echo "$want" > "$stamp"
}

setup_data() {
  local src=/usr/share/datasets/fashion-mnist dst=data/FashionMNIST/raw f
  # pt_original/train_gpt.py's text, from local licence files (stdlib only; idempotent)
  python3 scripts/stage_text_data.py --out data/text/input.txt
  if [ -f "$dst/t10k-labels-idx1-ubyte" ] && [ -f "$dst/train-images-idx3-ubyte" ]; then
    return
  fi
  if [ ! -f "$src/train-images-idx3-ubyte.gz" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing Debian's dataset-fashion-mnist (real Fashion-MNIST)"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist >/dev/null
    else
      echo "setup: Fashion-MNIST missing: run 'sudo apt-get install dataset-fashion-mnist' (Debian), then this again." >&2
      exit 1
    fi
  fi
  mkdir -p "$dst"
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    gunzip -c "$src/$f.gz" > "$dst/$f.tmp" && mv "$dst/$f.tmp" "$dst/$f"
  done
  echo "setup: staged Fashion-MNIST in $dst"
}

setup_timm() {
  local v
  for v in "$venv" .venv-ref; do
    [ -x "$v/bin/python" ] || continue
    if ! "$v/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r requirements-timm.txt; then
      echo "setup: could not install requirements-timm.txt into $v" >&2; exit 1
    fi
  done
}

# Our own modules' bytecode, written once here: every run.py process imports ~210 of them (adapter/, patches/, app/),
# and where PYTHONDONTWRITEBYTECODE is set (it is set in this workplace's shells) Python compiles them from source
# each time, ~0.5 s of CPU per process (measured 2026-12-07), and the test suite starts over a thousand such
# processes. A stale .pyc is never used: Python checks each one against its source's mtime and size.
compile_sources() {
  "$venv/bin/python" -m compileall -q -j 0 adapter patches app >/dev/null
}

case "$what" in
  all) setup_venv; compile_sources; setup_data ;;
  venv) setup_venv; compile_sources ;;
  data) setup_data ;;
  timm) setup_venv; compile_sources; setup_timm ;;
  *) echo "usage: scripts/setup.sh [all|venv|data|timm]" >&2; exit 2 ;;
esac

"""Python ``multiprocessing`` children started with the *spawn* method start as run.py does.

A spawned child is a fresh interpreter: ``multiprocessing.spawn`` re-imports the parent's main script as
``__mp_main__`` (its ``if __name__ == "__main__":`` block does not run) so that pickled objects defined there (a
``Dataset`` subclass in the script) can be rebuilt. Under run.py that import has no MindTorch import hook
(``import torch`` fails: there is no PyTorch in this environment), no MindSpore set-up, none of our patches: a
DataLoader with ``multiprocessing_context="spawn"`` (or after ``set_start_method("spawn")``) dies in its workers.

Here the parent's preparation data (``multiprocessing.spawn.get_preparation_data``) names
``app.mp_main`` as the child's main module instead of the script (the application hands that name down:
``adapter/hooks.py`` ``spawn_child_main``, provided by ``app/bootstrap.py``; this patch may not import ``app/``): it
sets MindSpore up exactly as run.py did (device from ``ADAPTER_MP_DEVICE``, which :func:`apply` records), installs the patches, then runs the script's source
as ``__mp_main__`` -- what Python's spawn does with the script itself. The script's folder and this project's root
are on the child's ``sys.path``. ``torch.multiprocessing.spawn`` has its own route (``patches/spawn.py``).

Replaces: ``multiprocessing.spawn.get_preparation_data``.
"""
from __future__ import annotations

import os
import sys

from adapter import hooks
from . import Patch, get_original, patch_attr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT_ENV = "ADAPTER_MP_SCRIPT"
DEVICE_ENV = "ADAPTER_MP_DEVICE"


def get_preparation_data(name):
    """``multiprocessing.spawn.get_preparation_data`` (Python's, via get_original), with ``app.mp_main`` (handed
    down: ``spawn_child_main``) as the child's main module when the parent's main is a script file, and this
    project's root on the child's path."""
    import multiprocessing.spawn as spawn
    data = get_original(spawn, "get_preparation_data")(name)
    main_path = data.pop("init_main_from_path", None)
    main_module = sys.modules.get("__main__")
    path = main_path or getattr(main_module, "__file__", None)
    child_main = hooks.provided("spawn_child_main")  # app.mp_main, handed down by app/bootstrap.py
    if path and os.path.isfile(path) and not data.get("init_main_from_name") and child_main:
        os.environ[SCRIPT_ENV] = os.path.abspath(path)
        data["init_main_from_name"] = child_main
    elif main_path:
        data["init_main_from_path"] = main_path
    if ROOT not in data.get("sys_path", []):
        data["sys_path"] = list(data.get("sys_path", [])) + [ROOT]
    return data


def apply() -> None:
    import multiprocessing.spawn as spawn
    import mindspore as ms
    os.environ[DEVICE_ENV] = ms.get_context("device_target")
    patch_attr(spawn, "get_preparation_data", get_preparation_data)


PATCH = Patch("mp_start", "multiprocessing spawn children (DataLoader workers) start with MindTorch, our patches and "
              "the script's definitions, as run.py", "post-import", apply,
              replaces=("multiprocessing.spawn.get_preparation_data",),
              effects=("sets ADAPTER_MP_DEVICE (the device spawned children set up)",))

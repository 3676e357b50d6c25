"""The declared cross-layer hooks: attributes one part of the adapter sets on a library object for another to read.

A patch often leaves a mark that another patch or the runtime reads later: ``patches/vision_data.py`` gives
``torchvision.datasets.MNIST`` a function that collates a whole batch, which ``patches/data_tensors.py``'s fetch
calls; ``patches/sgd.py`` marks ``torch.optim.SGD`` as keeping a float64 lr, which ``patches/optimizer.py`` reads.
Each such attribute used to be a bare ``_adapter_<name>`` string written in both places (74 names in 51 files,
issue 32 §4). Here each is declared once (:data:`HOOKS`: who sets it, on what, who reads it, what it holds), and code
names it through :func:`attr` / :func:`get`, which raise for an undeclared name, so a typo or a hook nobody declared
fails at once instead of reading as "not set".

The attribute on the object is still ``_adapter_<name>`` (:data:`PREFIX`), so a patch sets it with
``adapter.patching.patch_attr(owner, hooks.attr(name), value)`` (recorded, listed by ``--list-patches``) and a test
may ``monkeypatch`` it by that name. Names not yet moved here are listed in docs/architecture.md ("Cross-layer
hooks"); they keep working as before.

**Handed down** (:data:`HANDLERS`, issue 32 §3): what the application (``app/``, the top floor) gives the floors
below it, which may not import it: ``app/`` calls :func:`provide` and the runtime or a patch reads the value with
:func:`provided`, each name declared once, like the attribute hooks. :data:`VERBOSE_ENV` is the one setting the
application passes down through the environment (its children inherit it).

This module is a leaf of ``adapter/`` (standard library only): ``patches/`` and the runtime both use it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict

PREFIX = "_adapter_"


@dataclasses.dataclass(frozen=True)
class Hook:
    """One declared hook attribute.

    Attributes:
        name: the name after :data:`PREFIX` (the attribute is ``PREFIX + name``).
        on: the object that carries it, as a PyTorch user names it (``"torchvision.datasets.MNIST"``, or a kind:
            ``"an optimizer class"``).
        holds: the value's type and meaning.
        set_by: the module(s) that set it.
        read_by: the module(s) that read it.
    """
    name: str
    on: str
    holds: str
    set_by: str
    read_by: str


HOOKS: Dict[str, Hook] = {h.name: h for h in (
    Hook("collated_batch", "a dataset class (torchvision.datasets.MNIST and its family)",
         "function (dataset, indices: list of int) -> a collated numpy batch, or None to fetch per sample",
         "patches/vision_data.py", "patches/data_tensors.py (_MapDatasetFetcher.fetch)"),
    Hook("float64_lr", "an optimizer class (torch.optim.SGD, torch.optim.Adam)",
         "True: the class keeps each group's lr as a float64 Parameter, as PyTorch computes with a Python float",
         "patches/sgd.py, patches/adam.py", "patches/optimizer.py (add_param_group)"),
    Hook("step_count_unread", "an optimizer class (torch.optim.Rprop)",
         "True: the class's update does not read the global step count, so none is kept for it",
         "patches/rprop.py", "patches/optimizer.py (_global_step)"),
)}


@dataclasses.dataclass(frozen=True)
class Handler:
    """One value the application hands down (:func:`provide`, :func:`provided`).

    Attributes:
        name: its name.
        holds: the value's type and meaning.
        provided_by: the ``app/`` module that provides it.
        used_by: the module(s) below ``app/`` that read it, and what they do without it.
    """
    name: str
    holds: str
    provided_by: str
    used_by: str


HANDLERS: Dict[str, Handler] = {h.name: h for h in (
    Handler("failure_hints", "function (exc: BaseException, script path: str) -> str: what to print after the user's "
            "traceback (a torch API MindTorch lacks, the known risks at the traceback's lines), '' for nothing",
            "app/launcher.py (app/tools/migration_report.py's missing_api_hint and failure_hint)",
            "adapter/script_run.py (run_script, on the script's failure; nothing printed without it)"),
    Handler("spawn_child_main", "str: the dotted module a Python multiprocessing *spawn* child runs as its main module "
            "(it sets the process up as run.py did, then runs the parent's script as __mp_main__)",
            "app/bootstrap.py (app.mp_main)",
            "patches/mp_start.py (get_preparation_data; without it the child re-imports the script bare, as Python "
            "does)"),
)}
_PROVIDED: Dict[str, Any] = {}

#: "1": run.py --verbose: MindSpore's and MindTorch's own log lines are shown (set by app/bootstrap.py, read by
#: patches/log_noise.py; children inherit it)
VERBOSE_ENV = "ADAPTER_VERBOSE"


def _handler(name: str) -> Handler:
    if name not in HANDLERS:
        raise KeyError(f"handler {name!r} is not declared in adapter/hooks.py HANDLERS; declare it there (who provides "
                       "it, what it holds, who reads it)")
    return HANDLERS[name]


def provide(name: str, value: Any) -> None:
    """Hand ``value`` down as the declared handler ``name`` (the application, ``app/``, calls this). Raises KeyError
    naming adapter/hooks.py when ``name`` is not declared in :data:`HANDLERS`."""
    _handler(name)
    _PROVIDED[name] = value


def provided(name: str, default: Any = None) -> Any:
    """The value the application provided as handler ``name``, or ``default`` when it provided none (a test or a
    tool that runs the runtime without ``app/``). Raises KeyError for an undeclared ``name``."""
    _handler(name)
    return _PROVIDED.get(name, default)


def attr(name: str) -> str:
    """The attribute name of the declared hook ``name``: ``"collated_batch"`` -> ``"_adapter_collated_batch"``.

    Raises KeyError naming adapter/hooks.py when ``name`` is not declared in :data:`HOOKS`."""
    if name not in HOOKS:
        raise KeyError(f"hook {name!r} is not declared in adapter/hooks.py HOOKS; declare it there (who sets it, "
                       "on what, who reads it)")
    return PREFIX + name


def get(owner: Any, name: str, default: Any = None) -> Any:
    """``getattr(owner, attr(name), default)``: the declared hook's value on ``owner`` (a class or an instance;
    class hooks are read through ``type(obj)`` by the caller). Raises KeyError for an undeclared ``name``."""
    return getattr(owner, attr(name), default)

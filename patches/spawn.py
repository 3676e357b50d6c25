"""``torch.multiprocessing.spawn`` / ``start_processes``: children that run through run.py, as the parent does.

MindTorch 0.4.0's ``spawn`` uses Python's ``multiprocessing`` spawn start method: the child re-imports the main
script with a plain ``import torch`` — no MindTorch import hook, no MindSpore set-up, none of our patches. Here each
child is ``python run.py [the parent's run.py options] --original SCRIPT [args]`` that loads the script as
``__mp_main__`` (its ``if __name__ == "__main__":`` block does not run, as with PyTorch) and calls ``fn(i, *args)``
(``adapter/distributed.py``: ``spawn``, ``run_spawned``). When one child fails, the others are stopped and the parent
raises ``ProcessRaisedException`` with the child's traceback (or ``ProcessExitedException`` for a signal/exit code),
as PyTorch does; ``run.py`` then exits 1. ``init_process_group(..., init_method='tcp://HOST:PORT', world_size=W,
rank=R)`` (pytorch/examples imagenet style) or ``env://`` in the children joins MindSpore's cluster; rank 0 starts
its scheduler.

Replaces: ``torch.multiprocessing.spawn``/``start_processes`` (and the same in ``torch.multiprocessing.spawn``); in a
child: ``adapter.script_run.run_script``, which ``app/launcher.py`` looks up at each run (not a torch name: an
effect; the patch reaches no module of ``app/``).
"""
import importlib
import os

from . import Patch, patch_attr


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    from adapter import distributed
    return distributed.spawn(fn, args, nprocs, join, daemon, start_method)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    from adapter import distributed
    return distributed.spawn(fn, args, nprocs, join, daemon, start_method)


def apply() -> None:
    import mindtorch.torch.multiprocessing as mp
    # the module: `import ....multiprocessing.spawn as m` gives the function mp.spawn (before this patch: MindTorch's,
    # whose attributes the earlier bare assignments set instead of the module's)
    mp_spawn = importlib.import_module("mindtorch.torch.multiprocessing.spawn")
    from adapter import distributed

    if distributed.SPAWN_ENV in os.environ:  # this process is a spawned child: run fn(i, *args), not the script
        distributed.die_with_parent()
        from adapter import script_run  # what app/launcher.py runs (it looks run_script up there at each run)
        patch_attr(script_run, "run_script", distributed.run_spawned)

    spawn.__doc__ = start_processes.__doc__ = distributed.spawn.__doc__
    for module in (mp, mp_spawn):
        patch_attr(module, "spawn", spawn)
        patch_attr(module, "start_processes", start_processes)


PATCH = Patch("spawn", "torch.multiprocessing.spawn starts children through run.py (MindTorch, patches, same "
                       "options); a failing child stops the others and raises with its traceback",
              "post-import", apply,
              replaces=("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes",
                        "torch.multiprocessing.spawn.spawn", "torch.multiprocessing.spawn.start_processes"),
              effects=("in a child it started: adapter.script_run.run_script (what run.py runs) runs fn(i, *args) "
                       "instead of the script",))

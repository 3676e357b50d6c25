#!/usr/bin/env python
"""Run an unchanged PyTorch training script on MindSpore:

    python run.py [--device CPU|GPU|Ascend] --original train.py [the script's own args]
    python run.py --list-patches

The process first re-executes itself once with jemalloc preloaded (MindSpore's copy) or a glibc malloc tunable:
adapter/allocator.py (ADAPTER_MALLOC=system: no change). See app/launcher.py for what happens, in order, and
patches/ for each patched torch concept.
"""
import sys

if __name__ == "__main__":
    # first: re-exec under jemalloc / a glibc malloc tunable before anything allocates (adapter/allocator.py;
    # ADAPTER_MALLOC=system turns it off)
    from adapter import allocator
    allocator.reexec()

from app.launcher import main

if __name__ == "__main__":
    sys.exit(main())

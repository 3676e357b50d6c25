#!/usr/bin/env python
"""Run an unchanged PyTorch training script on MindSpore:

    python run.py [--device CPU|GPU|Ascend] --original train.py [the script's own args]
    python run.py --list-patches

See adapter/launcher.py for what happens, in order, and patches/ for each patched torch concept.
"""
import sys

from adapter.launcher import main

if __name__ == "__main__":
    sys.exit(main())

"""Runtime of the adapter, the ground floor: the step rewrite and compiled step, the eager bridge for ``backward()``
(``tape.py``), distributed launch, and the helpers the patches call (``userframe.py``, ``patching.py``, ``hooks.py``).
It imports neither ``patches/`` (the patched torch concepts) nor ``app/`` (``run.py``'s command line, process set-up
and tools): what it needs from above is handed down through ``hooks.py``."""

"""Runtime of the adapter: the launcher (``launcher.py``), the eager bridge for ``backward()`` (``tape.py``) and
helpers shared by the patches (``userframe.py``). The patched torch concepts themselves live in ``patches/``."""

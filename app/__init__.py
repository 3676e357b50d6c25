"""The application, the top floor: ``run.py``'s command line (``launcher.py``), the set-up of every process that runs
a user's script (``bootstrap.py``, ``mp_main.py``), and the tools it runs (``tools/``). It imports ``patches`` (the
registry) and ``adapter`` (the runtime); neither imports anything of it (``tests/test_layering.py``)."""

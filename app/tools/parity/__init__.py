"""``run.py --compare``: the same script under real PyTorch and on MindSpore, side by side.

* ``recorder.py``: what each side records (framework-neutral: imports only numpy and ``torch``);
* ``reference.py``: runs the script under real PyTorch (the ``.venv-ref`` environment, ``make reference``);
* ``compare.py``: runs it here with the reference's initial weights and batches, then writes the report.

Nothing in this package imports MindSpore at import time: ``reference.py`` runs in the Python 3.11 reference venv.
"""

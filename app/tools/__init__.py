"""Tools for a user's migration, run by ``run.py`` (``app/launcher.py``): the report (``migration_report.py``,
``report_risks.py``), the conformance harness (``conformance/``), parity runs against real PyTorch (``parity/``),
checkpoint conversion and export (``convert.py``, ``export.py``), and the corpus harness (``corpus.py``). They stand
above the runtime (``adapter/``) and the patches, below the launcher; they may use ``app/bootstrap.py``."""

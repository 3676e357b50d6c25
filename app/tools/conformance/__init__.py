"""API conformance: every torch call a real script makes, checked op by op against real PyTorch (issue 14).

* :mod:`.signature` — what one use of an API is: ``torch.Tensor.std(1;unbiased)``.
* :mod:`.inventory` — the (API, signature) pairs real code uses (pt_original/, torchvision's models).
* :mod:`.spec` — cases: an expression, its inputs (numpy-drawn, the same bits on both sides), how results are
  written down; :mod:`.cases` — the cases, one module per namespace.
* :mod:`.record` — golden results under real PyTorch (``.venv-ref``), into ``tests/fixtures/conformance/``.
* :mod:`.replay` — the same cases here, in PyNative and compiled in GRAPH_MODE, compared with the goldens.
* :mod:`.known` — the differences not fixed, with reasons (the table in ``docs/conformance.md``, ``run.py --report``).
* :mod:`.cli` — ``run.py conformance``.
"""

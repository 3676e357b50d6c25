# Two commands for a fresh machine (see README): `make run` and `make test`. Both set up first when needed.
# The default stack is mindspore 2.10.0 (requirements.txt, .venv; issue 33).
# `make test-quick`: the suite without the tests marked `slow` (pytest.ini); `make test` (CI) runs them all.
# `make run MINDSPORE=2.10.0` (or test, test-quick): the same on another supported MindSpore, in its own venv
# .venv-mindspore-<version> (scripts/setup.sh builds it; issue 17).
PY := $(if $(MINDSPORE),.venv-mindspore-$(MINDSPORE),.venv)/bin/python
# The default job: ResNet18 on real Fashion-MNIST (3x32x32), 1 full epoch (RUN_STEPS=N caps it), full test set.
RUN_STEPS ?= 0
RUN_ARGS ?= --arch resnet18 --epochs 1 --max-steps $(RUN_STEPS) --data-root data

# CI's second job (issues 17, 30, 33): the tests marked `stack` (pytest.ini: what can differ between MindSpore builds)
# on the second supported MindSpore, in .venv-mindspore-$(OTHER_MINDSPORE); tests listed in
# tests/stacks/mindspore-<version>.txt run as expected failures with their reason.
OTHER_MINDSPORE ?= 2.5.0.dev20250119
# pytest-xdist workers (issue 30): independent tests run on both cores; a file's tests stay on one worker
# (tests/conftest.py groups them, so module-scoped fixtures run once). JOBS=0 runs in one process.
JOBS ?= 2
XDIST = $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile)

.PHONY: setup setup-other-mindspore data run test test-quick test-other-mindspore reference corpus idioms
setup:
	@scripts/setup.sh all

data:
	@scripts/setup.sh data

run: setup
	$(PY) run.py --original pt_original/train_resnet.py $(RUN_ARGS)

test: setup
	$(PY) -m pytest -q $(XDIST) --durations=60

test-quick: setup
	$(PY) -m pytest -q $(XDIST) -m "not slow"

setup-other-mindspore:
	@MINDSPORE=$(OTHER_MINDSPORE) scripts/setup.sh venv

test-other-mindspore: data setup-other-mindspore
	.venv-mindspore-$(OTHER_MINDSPORE)/bin/python -m pytest -q $(XDIST) -m stack --durations=10

# The real-PyTorch environment for run.py --compare (.venv-ref; --compare also creates it on first use).
reference:
	@scripts/setup_reference.sh

# Our idiom scripts (pt_original/idioms/) through run.py, each judged against its PyTorch golden (app/tools/corpus.py).
idioms: setup
	$(PY) run.py corpus --scripts pt_original/idioms --goldens tests/fixtures/idioms

# The 13 pytorch/examples scripts (not in this repository) against the committed goldens (tests/fixtures/corpus/):
# make corpus EXAMPLES=<a pytorch/examples checkout at commit 77f55b9>
corpus: setup
	@test -n "$(EXAMPLES)" || { echo "make corpus EXAMPLES=<a pytorch/examples checkout (commit 77f55b9)>"; exit 2; }
	CORPUS_EXAMPLES=$(abspath $(EXAMPLES)) $(PY) -m pytest -q $(XDIST) tests/test_corpus.py

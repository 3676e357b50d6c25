# Two commands for a fresh machine (see README): `make run` and `make test`. Both set up first when needed.
# `make test-quick`: the suite without the tests marked `slow` (pytest.ini); `make test` (CI) runs them all.
# `make run MINDSPORE=2.10.0` (or test, test-quick): the same on another supported MindSpore, in its own venv
# .venv-mindspore-<version> (scripts/setup.sh builds it; issue 17).
PY := $(if $(MINDSPORE),.venv-mindspore-$(MINDSPORE),.venv)/bin/python
# The default job: ResNet18 on real Fashion-MNIST (3x32x32), 1 full epoch (RUN_STEPS=N caps it), full test set.
RUN_STEPS ?= 0
RUN_ARGS ?= --arch resnet18 --epochs 1 --max-steps $(RUN_STEPS) --data-root data

.PHONY: setup data run test test-quick reference
setup:
	@scripts/setup.sh all

data:
	@scripts/setup.sh data

run: setup
	$(PY) run.py --original pt_original/train_resnet.py $(RUN_ARGS)

test: setup
	$(PY) -m pytest -q --durations=30

test-quick: setup
	$(PY) -m pytest -q -m "not slow"

# The real-PyTorch environment for run.py --compare (.venv-ref; --compare also creates it on first use).
reference:
	@scripts/setup_reference.sh

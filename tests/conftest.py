"""Tests run in one process set up exactly as ``run.py`` sets up a user script: MindSpore on CPU in PyNative mode,
the pre-import patches, MindTorch's import hook, the post-import patches. ``import torch`` in a test is MindTorch."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from adapter.launcher import setup_mindspore  # noqa: E402

setup_mindspore("CPU")


@pytest.fixture(autouse=True)
def _fresh_tape():
    """No recording left open by a previous test."""
    from adapter import tape
    tape.discard()
    yield
    tape.discard()


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: end-to-end runs on real data (tens of seconds)")

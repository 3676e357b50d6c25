"""Tests run in one process set up exactly as ``run.py`` sets up a user script: MindSpore on CPU in PyNative mode,
the pre-import patches, MindTorch's import hook, the post-import patches. ``import torch`` in a test is MindTorch."""
import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from adapter.bootstrap import setup_mindspore  # noqa: E402

setup_mindspore("CPU")

# The compile cache (adapter/compile_cache.py, on by default in every run.py subprocess a test starts) lives in a
# folder of this test session, never in the developer's or CI machine's ~/.cache: the suite neither reads graphs
# compiled by another checkout nor fills the user's cache. Runs within the session share it, as a user's runs do:
# two runs of one script with the same arguments, device, mode and AMP level (the folder key) in one session meet in
# one folder, e.g. test_corpus.py's run of a corpus script and its --reference-record comparison run (dropout off
# there: its step is another graph, so the second run finds graph 0 foreign, drops the folder and compiles), or
# tests that run one fixture twice in --mode auto (the second loads what the first wrote, each step checked).
_CACHE_SESSION = tempfile.mkdtemp(prefix="adapter_test_session_")
os.environ["ADAPTER_COMPILE_CACHE_DIR"] = os.path.join(_CACHE_SESSION, "compile")


@pytest.fixture(autouse=True)
def _fresh_tape():
    """No recording left open by a previous test."""
    from adapter import tape
    tape.discard()
    yield
    tape.discard()


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_SESSION, ignore_errors=True)

"""patches/jit_third_party.py: installed packages are third-party code for MindSpore's graph parser wherever the venv
lives (MindSpore's own rule, for a venv outside the working directory), user modules stay user code."""
import os
import types

import numpy
import pytest

import patches


@pytest.fixture
def checker(monkeypatch):
    from adapter import backend
    checker = backend.internal("parser").third_party_checker
    if not hasattr(checker, "user_workspace_dir"):
        pytest.skip("this MindSpore's checker has no working-directory rule (2.10.0): the patch keeps its answer")
    # the layout `cd project; project/.venv`: the working directory's package path is a prefix of numpy's real path
    monkeypatch.setattr(checker, "user_workspace_dir", os.path.dirname(os.path.realpath(numpy.__file__)))
    return checker


def test_installed_package_inside_the_workspace_is_third_party(checker):
    assert patches.is_patched(checker, "is_third_party_module")
    assert patches.get_original(checker, "is_third_party_module")(numpy) is False  # MindSpore's answer: user code
    assert checker.is_third_party_module(numpy) is True


def test_user_module_and_ms_jit_modules_keep_mindspore_answer(checker, monkeypatch, tmp_path):
    monkeypatch.setattr(checker, "user_workspace_dir", str(tmp_path))
    user = types.ModuleType("user_model")
    user.__file__ = str(tmp_path / "user_model.py")
    (tmp_path / "user_model.py").write_text("")
    assert checker.is_third_party_module(user) is False
    monkeypatch.setenv("MS_JIT_MODULES", "numpy")  # MindSpore's opt-in: compile numpy as user code
    assert checker.is_third_party_module(numpy) is False


def test_installed_torch_model_library_is_user_code(checker, monkeypatch, tmp_path):
    """An installed package that imports torch (timm) is compiled as user code (timm's ResNet failed to compile as
    third-party code); one that does not stays third-party. Checked with the workspace elsewhere, as for a venv
    outside the project."""
    import torch
    monkeypatch.setattr(checker, "user_workspace_dir", str(tmp_path / "project"))
    site = tmp_path / "venv" / "lib" / "site-packages" / "modellib"
    site.mkdir(parents=True)
    (site / "net.py").write_text("")
    lib = types.ModuleType("modellib.net")
    lib.__file__ = str(site / "net.py")
    assert checker.is_third_party_module(lib) is True
    lib.nn = torch.nn
    assert checker.is_third_party_module(lib) is False
    assert patches.get_original(checker, "is_third_party_module")(lib) is True  # MindSpore's answer


def test_no_workspace_rule_keeps_mindspore_answer():
    """MindSpore 2.10.0's checker (no working-directory rule) answers for itself: MindSpore is never third-party
    (this patch's rule made ``Tensor.astype`` third-party there, and the Adam step failed to compile)."""
    from adapter import backend
    import mindspore
    checker = backend.internal("parser").third_party_checker
    if hasattr(checker, "user_workspace_dir"):
        pytest.skip("MindSpore 2.5's checker: covered by the tests above")
    assert checker.is_third_party_module(mindspore) is False
    assert checker.is_third_party_module(numpy) is True

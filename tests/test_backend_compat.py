"""adapter/backend_compat.py: the MindSpore-version shims are a no-op on the default stack (2.5-dev) and, where a
later MindSpore needs them (2.10.0), give MindTorch 0.4.0 back what 2.5 gave it: tensors with storage, in-place
writes that land, a Module whose hook dicts MindSpore and MindTorch share. Runs on whichever stack runs the tests."""
import numpy as np
import pytest

from adapter import backend, backend_compat, patching

# also on CI's second MindSpore (pytest.ini: stack): the backend fence: private MindSpore/MindTorch names and version checks
pytestmark = pytest.mark.stack

ON_210 = bool(backend_compat.applied())  # the shims applied: a MindSpore after 2.5 (2.10.0 measured)

SHIMS_210 = ["c_expression.Tensor", "set_adapter_config", "_ps_context._is_role_worker",
             "_ps_context._clone_hash_table", "_ps_context._insert_accumu_init_info", "logic_not_impl", "StubTensor",
             "_stub_method", "StubTensor._grad", "Parameter._grad", "Tensor.requires_grad", "Tensor._grad_fn"]


def test_default_stack_needs_no_shim():
    """On mindspore-dev 2.5.0.dev20250119 nothing is replaced (feature detection finds every original)."""
    version = backend.installed_versions()["mindspore"]
    if version == "2.5.0.dev20250119":
        assert backend_compat.applied() == [] and backend_compat.wrapper_rebinds()
    elif version == "2.10.0":
        applied = backend_compat.applied()
        assert applied[:len(SHIMS_210)] == SHIMS_210, applied
        assert {"ConvertToMsTensor", "ConvertToAdapterTensor", "convert_to_ms_tensor",
                "convert_to_adapter_tensor", "Cell._non_persistent_buffers_set", "Cell._forward_hook", "ops.cummin",
                "Tensor.bernoulli"} <= set(applied)
        assert not backend_compat.wrapper_rebinds()


def test_install_is_idempotent():
    before = backend_compat.applied()
    count = len(patching.records())
    backend_compat.install()
    assert backend_compat.applied() == before and len(patching.records()) == count


def test_tensors_keep_their_values_and_types():
    """MindTorch tensors made from numpy, by ops and by conversion hold their values (2.10 without shim 5: no
    storage) and stay MindTorch tensors; the MindSpore view of one is a plain ``mindspore.Tensor``."""
    import mindspore as ms
    import torch
    from mindtorch.torch.tensor import cast_to_ms_tensor
    x = torch.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = x * 2 + 1
    assert type(y) is torch.Tensor and y.size(0) == 2
    np.testing.assert_array_equal(y.numpy(), np.arange(6).reshape(2, 3) * 2 + 1)
    view = cast_to_ms_tensor(y)
    assert type(view) in backend.tensor_types()  # MindSpore 2.5: a StubTensor; 2.10: a Tensor
    np.testing.assert_array_equal(view.asnumpy(), y.numpy())
    plain = ms.Tensor(np.ones(2, np.float32))
    assert not backend.is_stub_tensor(plain)  # 2.10 without the hook: every Tensor counted as a StubTensor


def test_wrapped_tensor_is_not_retaining_grad():
    """``Tensor(ms_tensor, cast_tensor=True)`` copies the source's ``_retain_grad``: on 2.10 a bound method (truthy),
    read as the flag it stands for."""
    import mindspore as ms
    import torch
    t = torch.Tensor(ms.Tensor(np.ones(2, np.float32)), cast_tensor=True)
    assert t.retains_grad is False and t.grad_fn is None


def test_inplace_writes_land_during_a_recording():
    """``out += identity`` and ``nn.ReLU(inplace=True)`` while the eager bridge records (a module was called):
    2.10 with the 2.5 rebinding silently kept the old values (ResNet's first loss 2.22 instead of 2.55)."""
    import torch
    from adapter import tape
    lin = torch.nn.Linear(2, 2)
    x = torch.tensor(np.array([[-1.0, 2.0]], np.float32))
    lin(x)  # opens the recording
    assert tape.is_recording()
    a = x * 1
    a += x
    np.testing.assert_array_equal(a.numpy(), [[-2.0, 4.0]])
    r = torch.nn.ReLU(inplace=True)(a)
    assert r is a
    np.testing.assert_array_equal(a.numpy(), [[0.0, 4.0]])
    tape.discard()


def test_module_dicts_shared_with_mindspore():
    """A Module's ``_non_persistent_buffers_set`` / ``_forward_hook`` are the objects MindSpore's Cell reads (2.10
    made them read-only properties over ``_lazy_*``; MindTorch assigns them and reads its ``__dict__``)."""
    import torch
    m = torch.nn.Linear(2, 2)
    m.register_buffer("scratch", torch.zeros(1), persistent=False)
    assert "scratch" in m._non_persistent_buffers_set
    assert "scratch" not in m.state_dict()
    if ON_210:
        assert m.__dict__["_non_persistent_buffers_set"] is m._non_persistent_buffers_set


@pytest.mark.skipif(not ON_210, reason="the conversions are MindSpore's own on 2.5")
def test_conversions_are_identity_in_a_graph():
    """Shim 9: in a compiled function the two conversions are the tensor itself (and differentiable)."""
    import mindspore as ms
    to_ms = backend_compat._conversion_classes()[2]

    @ms.jit
    def f(x):
        return to_ms(x * 2) + 1

    x = ms.Tensor(np.ones(2, np.float32))
    np.testing.assert_array_equal(f(x).asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(ms.grad(lambda v: f(v).sum())(x).asnumpy(), [2.0, 2.0])


def test_onednn3_capped_at_avx2(tmp_path):
    """Shim 10: a MindSpore bundling oneDNN 3 gets ``ONEDNN_MAX_CPU_ISA=AVX2`` (its AVX-512 plain-layout Conv2D ran
    50-100x slower), unless the user set it; oneDNN 2 (2.5-dev) gets nothing."""
    (tmp_path / "lib").mkdir()
    assert backend_compat.set_environment({}, str(tmp_path)) == []  # no oneDNN 3
    (tmp_path / "lib" / "libdnnl.so.3").write_text("")
    environ = {}
    assert backend_compat.set_environment(environ, str(tmp_path)) == ["ONEDNN_MAX_CPU_ISA"]
    assert environ == {"ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert backend_compat.set_environment({"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}, str(tmp_path)) == []
    import os
    installed = backend.installed_versions()["mindspore"]
    assert (os.environ.get("ONEDNN_MAX_CPU_ISA") == "AVX2") == (installed == "2.10.0")


def test_parameter_grad_stays_a_torch_tensor():
    """``p.grad`` after ``backward()`` is MindTorch's tensor (2.10's C++ ``_grad`` slot returned a plain
    ``mindspore.Tensor``: ``p.grad.is_sparse`` in LBFGS raised AttributeError)."""
    import torch
    from adapter import tape
    lin = torch.nn.Linear(2, 2)
    loss = lin(torch.ones(3, 2)).sum()
    loss.backward()
    assert type(lin.weight.grad) is torch.Tensor and lin.weight.grad.is_sparse is False
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((2, 2), 3.0))
    tape.discard()


def test_cummin_and_bernoulli_keep_mindspore_25s_signatures():
    """Shims 11, 12 (2.10; on 2.5-dev the originals): ``ops.cummin`` gives a list MindTorch can assign into, and
    ``Tensor.bernoulli(p, seed)`` draws shaped like the tensor (p=0: all 0, p=1: all 1) (a bare ``x.bernoulli()``
    stays 2.10's, whose BernoulliExt kernel is not registered on CPU)."""
    import mindspore as ms
    from mindspore import ops
    out = ops.cummin(ms.Tensor(np.array([[3.0, 1.0, 2.0, 0.5]], np.float32)), 1)
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[0].asnumpy(), [[3.0, 1.0, 1.0, 0.5]])
    np.testing.assert_array_equal(out[1].asnumpy(), [[0, 1, 1, 3]])
    x = ms.Tensor(np.full((2, 3), 7.0, np.float32))
    for p, want in ((0.0, 0.0), (1.0, 1.0)):
        draw = x.bernoulli(ms.Tensor(np.full((2, 3), p, np.float32)), 5)
        assert draw.shape == (2, 3)
        np.testing.assert_array_equal(draw.asnumpy(), np.full((2, 3), want, np.float32))

"""patches/distributed.py's functions, importable by name (they were closures inside ``apply()``): each is what
``torch.distributed`` and ``torch.distributed.distributed_c10d`` hold, keeps PyTorch 2.13's signature defaults, and
before ``init_process_group`` behaves as PyTorch's (its message and its ``is_initialized()``; the multi-process runs
are tests/test_distributed.py)."""
import inspect

import pytest

from patches import distributed as patch


def test_each_function_is_the_installed_one():
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    for name, fn in patch.REPLACED.items():
        assert getattr(dist, name) is fn, name
        assert getattr(c10d, name) is fn, name
        assert getattr(patch, name if name != "_all_gather_base" else "all_gather_into_tensor") is fn


def test_reduce_op_defaults_are_pytorchs():
    import torch.distributed as dist
    # PyTorch 2.13: all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False), reduce(tensor, dst, op=...)
    assert inspect.signature(dist.all_reduce).parameters["op"].default is dist.ReduceOp.SUM
    assert inspect.signature(dist.reduce).parameters["op"].default is dist.ReduceOp.SUM
    assert dist.ReduceOp.AVG is dist.ReduceOp.AVG and str(dist.ReduceOp.AVG).lower().endswith("avg")


@pytest.mark.parametrize("call", ["all_reduce", "broadcast", "barrier"])
def test_collective_before_init_process_group_raises_pytorchs_message(call):
    import torch
    import torch.distributed as dist
    assert dist.is_initialized() is False  # PyTorch: False before init_process_group
    t = torch.ones(2)
    args = {"all_reduce": (t,), "broadcast": (t, 0), "barrier": ()}[call]
    with pytest.raises(RuntimeError, match="Default process group has not been initialized, please make sure to "
                                           "call init_process_group"):
        getattr(dist, call)(*args)


def test_availability_as_pytorch_cpu_build():
    import torch.distributed as dist
    assert dist.is_available() is True and dist.is_gloo_available() is True  # PyTorch 2.13 CPU wheel

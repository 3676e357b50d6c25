"""``Tensor.copy_`` writes a copy (patches/inplace.py, point 3): MindSpore's ``assign_value`` adopted the source's
buffer, so the optimizer's in-place update of a parameter after ``p.copy_(src)`` also changed ``src``. Expected
values: real PyTorch 2.13 on the same code (.venv-ref/bin/python, recorded here as constants: the sources keep
their values)."""
import numpy as np


def test_parameter_copy_source_is_not_moved_by_the_optimizer():
    import torch
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    saved = p.detach().clone()
    fresh = torch.tensor([3.0, 4.0])
    opt = torch.optim.SGD([p], lr=0.5)
    for src, expected_p in ((saved, [0.5, 1.5]), (fresh, [2.5, 3.5])):
        with torch.no_grad():
            p.copy_(src)
        p.grad = torch.ones(2)
        opt.step()
        assert p.tolist() == expected_p
    assert saved.tolist() == [1.0, 2.0] and fresh.tolist() == [3.0, 4.0]  # PyTorch: unchanged


def test_load_state_dict_source_is_not_moved_by_training():
    import torch
    model = torch.nn.Linear(2, 1)
    best = {k: v.clone() for k, v in model.state_dict().items()}
    before = {k: v.numpy().copy() for k, v in best.items()}
    model.load_state_dict(best)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.ones(3, 2)).sum().backward()
    opt.step()
    for k, v in best.items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    assert not np.array_equal(model.weight.detach().numpy(), before["weight"])


def test_copy_broadcasts_casts_and_writes_through_detach():
    import torch
    t = torch.zeros(2, 3)
    t.copy_(torch.tensor([1, 2, 3]))  # int64 row broadcast into float32
    assert t.dtype == torch.float32 and t.tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    p = torch.nn.Parameter(torch.zeros(2))
    p.data.copy_(torch.tensor([5.0, 6.0]))  # .data writes through (patches/inplace.py, point 2)
    assert p.tolist() == [5.0, 6.0]

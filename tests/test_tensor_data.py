"""``torch.tensor`` / ``torch.as_tensor`` of a ``collections.deque`` or ``range`` (patches/tensor_data.py), as
pytorch/examples reinforce.py does (``returns = torch.tensor(returns)`` with ``returns`` a deque). MindTorch 0.4.0
raised ``TypeError: For 'Tensor', the type of 'input_data' should be one of [...] but got type 'deque'``; these
tests fail with ``ADAPTER_DISABLE_PATCHES=tensor_data``. Values and dtypes as real PyTorch 2.13 gives them
(observed with .venv-ref: ``torch.tensor(deque([1.0, 2.0]))`` -> float32 ``[1., 2.]``, ``torch.tensor(range(3))``
-> int64 ``[0, 1, 2]``)."""
import collections


def test_deque_and_range_as_pytorch():
    import torch
    x = torch.tensor(collections.deque([1.0, 2.0]))
    assert x.tolist() == [1.0, 2.0] and x.dtype == torch.float32
    r = torch.tensor(range(3))
    assert r.tolist() == [0, 1, 2] and r.dtype == torch.int64
    assert torch.as_tensor(collections.deque([1, 2])).tolist() == [1, 2]
    assert torch.tensor([collections.deque([1.0]), collections.deque([2.0])]).tolist() == [[1.0], [2.0]]
    assert torch.tensor(collections.deque([[1.0, 2.0], [3.0, 4.0]]), dtype=torch.float64).dtype == torch.float64


def test_reinforce_returns_normalisation():
    """reinforce.py's finish_episode: discounted returns in a deque, normalised (PyTorch 2.13: these values)."""
    import numpy as np
    import torch
    returns = collections.deque()
    R = 0
    for r in [1.0, 1.0, 1.0, 1.0][::-1]:
        R = r + 0.99 * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    eps = np.finfo(np.float32).eps.item()
    returns = (returns - returns.mean()) / (returns.std() + eps)
    np.testing.assert_allclose(returns.tolist(), [1.1579947471618652, 0.39117512106895447, -0.3833901584148407,
                                                  -1.1657793521881104], rtol=1e-6)

"""``torch.Tensor`` methods and operators, on tensors and on ``nn.Parameter`` receivers."""
from adapter.conformance.spec import C, T

CASES = [
    C("a.std()", a=T(3, 4)),
    C("a.std(1)", a=T(3, 4)),
    C("a.std(dim=1)", a=T(3, 4)),
    C("a.std(dim=1)", a=T(3, 4, param=True)),
    C("a.std()", a=T(3, 4, param=True)),
    C("a.var(1, unbiased=False)", a=T(3, 4)),
    C("a.var(1, unbiased=False)", a=T(3, 4, param=True)),
    C("a.max(1).indices", a=T(3, 4, param=True)),
    C("a.max(1)", a=T(3, 4)),
    C("a.median()", a=T(3, 5, param=True)),
    C("a.median()", a=T(3, 5)),
    C("a + b", a=T(2, 3), b=T(2, 3)),
    C("a.view(-1)", a=T(2, 3)),
    C("a[0]", a=T(2, 3)),
    C("a.sum()", a=T(2, 3, dtype="int64")),
    C("a.argmax(1)", a=T(3, 4)),
    C("a.item()", a=T(dtype="float32"), grad=False, graph=False),
]

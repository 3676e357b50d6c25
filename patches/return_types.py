"""``torch.return_types``: the named tuples PyTorch returns from ``sort``, ``cummax``, ``aminmax``, ``linalg.eigh``...

PyTorch returns a structseq (``torch.return_types.sort(values=..., indices=...)``) from every multi-output op, so
scripts write ``x.sort(descending=True).indices``, ``torch.linalg.eigh(c).eigenvalues``, ``torch.aminmax(x).min``.
MindTorch 0.4.0 does so for ``max``/``min``/``topk``/``kthvalue``/``median``/``nanmedian``/``linalg.qr``/
``linalg.svd``/``triangular_solve`` only; the ops listed in :data:`WRAPPED` returned a plain tuple (``cummin`` a
list), so the attribute access failed with ``AttributeError: 'tuple' object has no attribute 'indices'``.

Here those ops (``torch.X``, ``torch.linalg.X`` and the ``Tensor`` method of the same name, where it exists) return
the named tuple with PyTorch 2.13's field names and order (observed in ``.venv-ref``: ``repr`` of each
``torch.return_types`` type). Indexing and unpacking are unchanged. As MindTorch's own named tuples, the wrap applies
in PyNative only: inside a compiled (graph-mode) function the result stays a plain tuple, which indexing and
unpacking read the same way (MindSpore's graph syntax has no user namedtuple types), and reading a field there
works through ``patches/graph_return_fields.py``.

``linalg.qr`` returned MindTorch's own ``qr`` named tuple where PyTorch's is ``torch.return_types.linalg_qr``, and
``linalg.lu_factor_ex`` / ``torch.lu(..., get_infos=True)`` plain tuples where PyTorch's are ``linalg_lu_factor_ex``
/ ``_lu_with_info`` (op_db's ``linalg.qr``, ``linalg.lu_factor_ex``, ``lu``: "result is tuple", issue 35). An
``info`` field is PyTorch's int32 tensor (0-d for one matrix) where MindTorch gave a Python ``int`` for one matrix
(``linalg.cholesky_ex``, ``linalg.inv_ex``, ``linalg.lu_factor_ex``, ``lu``); its value stays MindTorch's (0: these
do not detect a failed factorization).

Replaces: ``torch.sort/cummax/cummin/aminmax/frexp/slogdet/qr/svd/histogram/lu_unpack/geqrf/lu``, the same names in
``torch.functional`` (but ``slogdet``) and on ``torch.Tensor`` (but ``lu_unpack``), ``torch.linalg.eigh/eig/slogdet/
lstsq/inv_ex/cholesky_ex/lu_factor/lu/qr/lu_factor_ex``, and ``torch.return_types`` (a module, registered in
``sys.modules``).
"""
import collections
import functools
import sys

from . import Patch, get_replaced, patch_attr
from ._wrap_once import wrap_attr

# PyTorch 2.13's field order per return type (torch.return_types.<name>)
FIELDS = {
    "aminmax": ("min", "max"), "cummax": ("values", "indices"), "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"), "geqrf": ("a", "tau"), "histogram": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"), "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_svd": ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"), "median": ("values", "indices"), "min": ("values", "indices"),
    "mode": ("values", "indices"), "nanmedian": ("values", "indices"), "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"), "sort": ("values", "indices"), "svd": ("U", "S", "V"),
    "topk": ("values", "indices"), "triangular_solve": ("solution", "cloned_coefficient"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "_lu_with_info": ("LU", "pivots", "info"),
}

# the ops MindTorch 0.4.0 returns a plain tuple/list from: (namespace, name, return type)
WRAPPED = [
    ("torch", "sort", "sort"), ("torch", "cummax", "cummax"), ("torch", "cummin", "cummin"),
    ("torch", "aminmax", "aminmax"), ("torch", "frexp", "frexp"), ("torch", "slogdet", "slogdet"),
    ("torch", "qr", "qr"), ("torch", "svd", "svd"), ("torch", "histogram", "histogram"),
    ("torch", "lu_unpack", "lu_unpack"), ("torch", "geqrf", "geqrf"),
    ("linalg", "eigh", "linalg_eigh"), ("linalg", "eig", "linalg_eig"), ("linalg", "slogdet", "linalg_slogdet"),
    ("linalg", "lstsq", "linalg_lstsq"), ("linalg", "inv_ex", "linalg_inv_ex"),
    ("linalg", "cholesky_ex", "linalg_cholesky_ex"), ("linalg", "lu_factor", "linalg_lu_factor"),
    ("linalg", "lu", "linalg_lu"),
    # op_db's linalg.qr, linalg.lu_factor_ex, lu (get_infos=True: 3 results; a pair stays a plain tuple, as PyTorch's)
    ("linalg", "qr", "linalg_qr"), ("linalg", "lu_factor_ex", "linalg_lu_factor_ex"), ("torch", "lu", "_lu_with_info"),
]

TYPES = {}
for _name, _fields in FIELDS.items():
    TYPES[_name] = collections.namedtuple(_name, _fields)
    TYPES[_name].__module__ = "torch.return_types"


def _named(original, type_name: str):
    """``original`` whose tuple result becomes ``torch.return_types.<type_name>`` in PyNative."""
    from mindtorch.utils import pynative_mode_condition
    cls = TYPES[type_name]
    n = len(cls._fields)

    info = cls._fields.index("info") if "info" in cls._fields else None

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        if pynative_mode_condition() and isinstance(result, (tuple, list)) and len(result) == n:
            if info is not None and isinstance(result[info], int):  # MindTorch's info of one matrix: an int
                import mindtorch.torch as torch
                result = list(result)
                result[info] = torch.tensor(result[info], dtype=torch.int32)
            return cls(*result)
        return result
    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", type_name)
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = original
    wrapper._adapter_return_type = type_name
    return wrapper


def apply() -> None:
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    import mindtorch.torch.linalg as linalg
    from mindtorch.torch.tensor import Tensor
    from ._modules import new_module
    namespaces = {"torch": torch, "linalg": linalg}
    for space, name, type_name in WRAPPED:
        owner = namespaces[space]
        if not hasattr(owner, name):
            continue
        original = get_replaced(owner, name, NAME)  # patches/sort.py may have wrapped it already
        shared = space == "torch" and hasattr(functional, name) and get_replaced(functional, name, NAME) is original
        wrapped = wrap_attr(owner, name, NAME, functools.partial(_named, type_name=type_name))
        if shared:
            patch_attr(functional, name, wrapped)
        if space == "torch" and name in Tensor.__dict__:
            wrap_attr(Tensor, name, NAME, functools.partial(_named, type_name=type_name))
    module = sys.modules.get("mindtorch.torch.return_types")
    if module is None:
        module = new_module("mindtorch.torch.return_types", "torch.return_types (patches/return_types.py)")
    for type_name, cls in TYPES.items():
        setattr(module, type_name, cls)  # our own module's attributes
    patch_attr(torch, "return_types", module)


NAME = "return_types"
_TORCH = ("sort", "cummax", "cummin", "aminmax", "frexp", "slogdet", "qr", "svd", "histogram", "lu_unpack", "geqrf",
          "lu")
PATCH = Patch(NAME, "sort/cummax/cummin/aminmax/frexp/slogdet/qr/svd/linalg.eigh/eig/lstsq/... return "
                    "PyTorch's named tuples (.values/.indices, .eigenvalues...), as max/topk already did",
              "post-import", apply,
              replaces=tuple(f"torch.{n}" for n in _TORCH)
              + tuple(f"torch.functional.{n}" for n in _TORCH if n != "slogdet")
              + tuple(f"torch.Tensor.{n}" for n in _TORCH if n != "lu_unpack")
              + tuple(f"torch.linalg.{name}" for space, name, _ in WRAPPED if space == "linalg")
              + ("torch.return_types",),
              effects=("registers the module torch.return_types (sys.modules)",),
              after=("sort",))

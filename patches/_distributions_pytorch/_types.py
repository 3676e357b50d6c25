# adapter: not a PyTorch file. The type aliases that PyTorch's torch/types.py gives this package (annotations only;
# MindTorch 0.4.0's mindtorch.torch.types lacks _dtype, _Number, _size).
"""Annotation-only aliases for the vendored ``torch.distributions`` (see patches/distributions.py)."""
from typing import Sequence, Union

import mindtorch.torch as torch

_bool = bool
_int = int
_float = float
_complex = complex
_dtype = object  # torch.dtype: MindTorch's dtypes are MindSpore types
Number = Union[int, float, bool]
_Number = Union[int, float, bool, complex]
_size = Union[torch.Size, Sequence[int]]
Device = Union[object, str, int, None]

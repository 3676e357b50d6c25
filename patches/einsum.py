"""``torch.einsum`` with PyTorch 2.13's semantics, built from ops every MindSpore backend has.

MindTorch 0.4.0's ``torch.einsum`` (``mindtorch/torch/functional.py``) calls ``mindspore.ops.einsum``, whose
``Einsum`` primitive has a GPU kernel only: on the CPU (and on Ascend) every call failed with "Unsupported op
[Einsum] on CPU". Attention code (``"bhqd,bhkd->bhqk"``), bilinear forms and outer products all hit it.

This module replaces it with PyTorch's own algorithm (``aten/src/ATen/native/Linear.cpp``: ``einsum`` and
``sumproduct_pair``; the Python front end ``torch/functional.py``: ``einsum``), computed with ``transpose``,
``reshape``, ``diagonal``, ``sum``, broadcasting ``mul`` and ``bmm`` -- differentiable MindSpore ops with CPU, GPU
and Ascend kernels:

1. parse the equation: subscripts ``[a-zA-Z]``, spaces ignored, one ``...`` per operand and in the output, ``->``
   optional (implicit output: the ellipsis dimensions, then the subscripts that appear exactly once, upper case
   before lower case);
2. align every operand to the dimensions ``output + contracted``: a repeated subscript in one operand takes the
   diagonal (``"ii->i"``), missing subscripts become size-1 dimensions (size-1 dimensions broadcast);
3. contract the operands left to right in pairs (PyTorch's order without ``opt_einsum``, which the reference
   environment lacks; ``torch.backends.opt_einsum.enabled`` is False there): a contracted dimension that only one
   side still has is summed first; the pair is one ``bmm`` over dimensions grouped as batch / left-only / summed /
   right-only, or a broadcasting ``mul`` when nothing is summed;
4. a single operand has its contracted dimensions summed.

Shape work is done once per (equation, shapes) in Python (:func:`_plan_python`, cached; a ``constexpr`` while a
graph compiles), and ATen's permute/reshape chains are shortened (:func:`_simplify`): ``"bqd,bkd->bqk"`` runs as
one transpose and one ``bmm``, as hand-written code would.

Operands with a size-0 dimension: the result is then empty or made of sums over nothing, zeros in PyTorch, and
every gradient is zero; here it is ``zeros_like`` of the computed result (shape and dtype), not the computed values:
MindSpore's CPU ``BatchMatMul`` and ``ReduceSum`` leave their output uninitialised when their input is empty
(``ones(2, 0) @ ones(0, 3)`` read back garbage such as 1.875), and their gradients read garbage too or failed
("The divisor value should not be 0!").

Accepted calls (PyTorch's): ``einsum(equation, *operands)``, ``einsum(equation, [operands])`` and the sublist format
``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` (integers in [0, 52) and ``...``). Shapes: any, including 0-D and
size-1 broadcasting. Dtypes: as the ops give them; ``bmm`` needs both sides of one dtype, as in PyTorch.

Errors (PyTorch 2.13's types and texts, checked at trace time in a ``constexpr`` -- Python while a graph compiles,
where shapes and the equation are constants -- so a compiled step's first, eager call raises them at the user's
line): ``ValueError`` "einsum(): must specify the equation string and at least one operand, ..." and for a sublist
subscript outside [0, 52); ``RuntimeError`` for a malformed equation, operand-count, dimension-count, size and
broadcast mismatches, ``"expected scalar type Float but found Double"`` when a pair contracted by ``bmm`` has two
dtypes; ``NotImplementedError`` for a ``bmm`` of booleans.

Not as PyTorch: the result of a single-operand einsum that only permutes (``"ij->ji"``) is a new tensor, not a view
sharing the operand's storage (MindSpore tensors have no views); summation order inside ``bmm`` and ``sum`` is
MindSpore's (float32 results differ by rounding, ~1e-7 relative).

Replaces: ``torch.einsum`` and ``torch.functional.einsum``.
"""
from __future__ import annotations

import functools

from . import Patch, get_replaced, patch_attr

# graph code below reads these module globals; set by apply()
ms = cast_to_ms_tensor = cast_to_adapter_tensor = _plan = _sublist_equation = _check_bmm = None

_NUM_LETTERS = 26
_ELLIPSIS = 2 * _NUM_LETTERS  # the code of "..." among the subscript codes 0-51 (A-Z, a-z)

# unary instructions of a plan (see _plan_python)
_DIAG, _PERM, _RESHAPE, _SUM = 0, 1, 2, 3
# pair contractions: broadcasting product, bmm
_MUL, _BMM = 0, 1

_NO_OPERAND = ("einsum(): must specify the equation string and at least one operand, or at least one operand and "
               "its subscripts list")


def _code(label: int) -> int:
    """Subscript code 0-51 of an ASCII letter (``A``-``Z`` -> 0-25, ``a``-``z`` -> 26-51, as ATen)."""
    return label - ord("A") if ord("A") <= label <= ord("Z") else label - ord("a") + _NUM_LETTERS


def _letter(code: int) -> str:
    return chr(code + ord("A")) if code < _NUM_LETTERS else chr(code - _NUM_LETTERS + ord("a"))


def _is_alpha(label: int) -> bool:
    return ord("A") <= label <= ord("Z") or ord("a") <= label <= ord("z")


def _sublist_equation_python(sublists, output) -> str:
    """The equation string of the sublist format (``torch/functional.py``): subscript ``n`` in [0, 26) is ``A``+n,
    in [26, 52) ``a``+n-26, ``...`` stays ``...``; ``sublists`` are the operands', ``output`` the output's or None.

    Raises:
        ValueError: a subscript outside [0, 52) (PyTorch's text).
    """
    def parse(n) -> str:
        if n is Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")

    equation = ",".join("".join(parse(s) for s in sub) for sub in sublists)
    if output is not None:
        equation += "->" + "".join(parse(s) for s in output)
    return equation


def _parse(equation: str, num_ops: int):
    """ATen's parse of the left-hand side: per operand the list of subscript codes (``_ELLIPSIS`` for ``...``).
    ``equation`` is taken as bytes (ATen reads a ``std::string``): error positions are byte offsets.

    Returns ``(op_labels, lhs_len, rhs_bytes or None)``. Raises RuntimeError (ATen's texts)."""
    eq = equation.encode("utf-8")
    arrow = eq.find(b"->")
    lhs = eq if arrow < 0 else eq[:arrow]
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        label = lhs[i]
        if label == ord(" "):
            pass
        elif label == ord("."):
            if ell_in_input:
                raise RuntimeError(f"einsum(): found '.' for operand {curr} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == ord(".") and lhs[i + 2] == ord(".")):
                raise RuntimeError(f"einsum(): found '.' for operand {curr} that is not part of any ellipsis")
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif label == ord(","):
            curr += 1
            if curr >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        else:
            if not _is_alpha(label):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            op_labels[curr].append(_code(label))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels, len(lhs), (None if arrow < 0 else eq[arrow + 2:])


def _broadcast(a, b):
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def _pair_plan(a, b, sum_dims):
    """ATen's ``sumproduct_pair(left, right, sum_dims, keepdim=True)`` on shapes ``a``, ``b`` (same rank).

    Returns ``(prog_left, prog_right, kind, prog_out, out_shape)``: the unary programs run on the left and right
    operands, ``_MUL`` (broadcasting product) or ``_BMM``, the program run on the product, and the result's shape
    (summed dimensions kept with size 1)."""
    if not sum_dims:
        return [], [], _MUL, [], _broadcast(a, b)
    dim = len(a)
    left, right = list(a), list(b)
    prog_l, prog_r = [], []
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dim):
        sl, sr = left[i] != 1, right[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left[i]
            elif sl:
                prog_l.append((_SUM, (i,), True))
                left[i] = 1
            elif sr:
                prog_r.append((_SUM, (i,), True))
                right[i] = 1
        elif sl and sr:
            lro.append(i)
            lro_size *= left[i]
        elif sl:
            lo.append(i)
            lo_size *= left[i]
        else:
            ro.append(i)
            ro_size *= right[i]
    sums = list(sum_dims)
    out_size = [left[d] for d in lro] + [left[d] for d in lo] + [1] * len(sums) + [right[d] for d in ro]
    lperm = tuple(lro + lo + sums + ro)
    rperm = tuple(lro + sums + ro + lo)
    operm = [-1] * dim
    for k, d in enumerate(lro + lo + sums + ro):
        operm[d] = k
    prog_l += [(_PERM, lperm), (_RESHAPE, (lro_size, lo_size, sum_size))]
    prog_r += [(_PERM, rperm), (_RESHAPE, (lro_size, sum_size, ro_size))]
    prog_o = [(_RESHAPE, tuple(out_size)), (_PERM, tuple(operm))]
    out_shape = tuple(out_size[operm[d]] for d in range(dim))
    return prog_l, prog_r, _BMM, prog_o, out_shape


def _next_shape(ins, shape):
    """The shape after instruction ``ins`` (see :func:`_plan_python`) on a tensor of shape ``shape``."""
    if ins[0] == _PERM:
        return tuple(shape[d] for d in ins[1])
    if ins[0] == _RESHAPE:
        return tuple(ins[1])
    if ins[0] == _SUM:
        if ins[2]:
            return tuple(1 if d in ins[1] else s for d, s in enumerate(shape))
        return tuple(s for d, s in enumerate(shape) if d not in ins[1])
    d1, d2 = ins[1], ins[2]
    return tuple(s for d, s in enumerate(shape) if d not in (d1, d2)) + (min(shape[d1], shape[d2]),)


def _shape_after(prog, shape):
    for ins in prog:
        shape = _next_shape(ins, shape)
    return tuple(shape)


def _non1(shape):
    return [s for s in shape if s != 1]


_MAX_SUM_RANK = 8  # MindSpore's CPU Tile (in ReduceSum's gradient) refuses tensors of more dimensions


def _low_rank_sums(prog, shape):
    """``prog`` with each sum of a tensor of more than ``_MAX_SUM_RANK`` dimensions done on its dimensions that are
    not 1 (reshape, sum, reshape): an einsum with 9 or more distinct subscripts has 9-D intermediates, and the
    gradient of MindSpore's ReduceSum fails on them ("For 'Tile', input shape can not be greater than default max
    size: 8")."""
    out = []
    for ins in prog:
        new = _next_shape(ins, shape)
        if ins[0] == _SUM and len(shape) > _MAX_SUM_RANK:
            kept = [d for d, n in enumerate(shape) if n != 1]
            dims = tuple(k for k, d in enumerate(kept) if d in ins[1])
            if not dims:  # summing size-1 dimensions only: still a sum (int32 becomes int64, as in PyTorch)
                kept.append(ins[1][0])
                dims = (len(kept) - 1,)
            out.append((_RESHAPE, tuple(shape[d] for d in kept)))
            out.append((_SUM, dims, False))
            out.append((_RESHAPE, new))
        else:
            out.append(ins)
        shape = new
    return out


def _simplify(prog, shape):
    """``prog`` with fewer instructions and the same result (ATen's programs are kept literally in
    :func:`_plan_python`; most of their permutations only move size-1 dimensions). A run of permutations and
    reshapes that only insert or drop size-1 dimensions, optionally ended by any reshape, becomes at most one
    permutation (of the dimensions that are not 1) and one reshape; identities are dropped. Returns a tuple."""
    prog = _low_rank_sums(prog, shape)
    out = []
    shape = tuple(shape)
    i = 0
    while i < len(prog):
        if prog[i][0] not in (_PERM, _RESHAPE):
            out.append(prog[i])
            shape = _next_shape(prog[i], shape)
            i += 1
            continue
        base = shape  # the shape the permutation applies to: after the run's leading reshapes
        tags = [d if n != 1 else None for d, n in enumerate(base)]  # the base dimension each position holds
        cur, final = base, None
        while i < len(prog) and prog[i][0] in (_PERM, _RESHAPE):
            ins = prog[i]
            new = _next_shape(ins, cur)
            i += 1
            if ins[0] == _PERM:
                tags = [tags[d] for d in ins[1]]
            elif _non1(new) == _non1(cur):
                order = iter([t for t in tags if t is not None])
                tags = [next(order) if n != 1 else None for n in new]
            elif [t for t in tags if t is not None] == [d for d, n in enumerate(base) if n != 1]:
                base = new  # nothing permuted yet: this reshape starts the run again
                tags = [d if n != 1 else None for d, n in enumerate(base)]
            else:  # a reshape that merges or splits permuted dimensions ends the run
                final = new
                break
            cur = new
        order = [t for t in tags if t is not None]
        if order != [d for d, n in enumerate(base) if n != 1]:
            if base != shape:
                out.append((_RESHAPE, base))
            ones = iter([d for d, n in enumerate(base) if n == 1])
            if final is None and len(cur) == len(base):
                perm = tuple(t if t is not None else next(ones) for t in tags)
            else:
                perm = tuple(order + list(ones))
            out.append((_PERM, perm))
            shape = _next_shape(out[-1], base)
        target = cur if final is None else final
        if target != shape:
            out.append((_RESHAPE, target))
            shape = target
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _plan_python(equation: str, shapes: tuple):
    """PyTorch's ``einsum`` (``Linear.cpp``) as a plan over the operands' shapes ``shapes`` (a tuple of int tuples);
    a ``constexpr`` in graphs.

    ATen's steps are built literally: per operand the program aligning it to the dimensions ``output +
    contracted`` (diagonals of repeated subscripts, size-1 dimensions for missing ones, a permutation), per pair the
    sums of dimensions only one side still has, ``sumproduct_pair``'s permutations and reshapes around the ``bmm``,
    and at the end the contracted size-1 dimensions dropped (one operand: summed). The programs between two
    kernels are then joined and shortened by :func:`_simplify`.

    Returns ``(first, steps, empty)``: ``first`` the program run on operand 0 (up to the first product, or to the
    result for one operand); ``steps[k]`` = ``(program of operand k + 1, kind, program after the product)``, kind
    ``_MUL`` (broadcasting product) or ``_BMM`` (``bmm`` of two 3-D tensors); ``empty``: whether an operand has a
    size-0 dimension (module docstring). A program is a tuple of ``(_DIAG, dim1, dim2)`` (the diagonal, appended
    last), ``(_PERM, perm)``, ``(_RESHAPE, shape)``, ``(_SUM, dims, keepdim)``.

    Raises:
        RuntimeError: PyTorch's messages for malformed equations and mismatched operands (module docstring).
    """
    num_ops = len(shapes)
    op_labels, lhs_len, rhs = _parse(equation, num_ops)
    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, (shape, labels) in enumerate(zip(shapes, op_labels)):
        ndims = len(shape)
        nlabels = len(labels)
        has_ellipsis = False
        for label in labels:
            if label == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[label] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}"
                + (") is more than the number of dimensions (" if has_ellipsis
                   else ") does not match the number of dimensions (")
                + f"{ndims}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))

    label_perm_index = [-1] * _ELLIPSIS
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if rhs is None:
        perm_index = ell_num_dim
        ell_in_output = True
        for label in range(_ELLIPSIS):
            if label_count[label] == 1:
                label_perm_index[label] = perm_index
                perm_index += 1
    else:
        i = 0
        while i < len(rhs):
            label = rhs[i]
            if label == ord(" "):
                pass
            elif label == ord("."):
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == ord(".") and rhs[i + 2] == ord(".")):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not _is_alpha(label):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {lhs_len + 2 + i} in the "
                                       "equation string, subscripts must be in [a-zA-Z]")
                index = _code(label)
                if not (label_count[index] > 0 and label_perm_index[index] == -1):
                    raise RuntimeError(f"einsum(): output subscript {chr(label)}"
                                       + (" appears more than once in the output" if label_perm_index[index] > -1
                                          else " does not appear in the equation for any input operand"))
                label_perm_index[index] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for label in range(_ELLIPSIS):
        if label_count[label] > 0 and label_perm_index[label] == -1:
            label_perm_index[label] = perm_index
            perm_index += 1

    # align the operands: diagonals of repeated subscripts, size-1 dimensions for missing ones, permutation
    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    prep, aligned = [], []
    for i, shape in enumerate(shapes):
        op = list(shape)
        prog = []
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = len(shape) - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op[dim] != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == op[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {op[dim]} "
                                f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} "
                                "for the respective dimension")
                        ell_sizes[j] = op[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op[dim] != 1:
                    if not (label_size[s] == 1 or label_size[s] == op[dim]):
                        raise RuntimeError(
                            f"einsum(): subscript {_letter(s)} has size {op[dim]} for operand {i} which does not "
                            f"broadcast with previously seen size {label_size[s]}")
                    label_size[s] = op[dim]
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:  # repeated subscript: the diagonal, moved to the first occurrence's place
                prev = permutation[label_perm_index[s]]
                if op[dim] != op[prev]:
                    raise RuntimeError(f"einsum(): subscript {_letter(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {op[dim]} != {op[prev]}")
                size = op[prev]
                prog.append((_DIAG, prev, dim))
                del op[dim]
                del op[prev]
                rank = len(op) + 1
                move = list(range(rank - 1))
                move.insert(prev, rank - 1)
                prog.append((_PERM, tuple(move)))
                op.insert(prev, size)
        missing = 0
        for k, val in enumerate(permutation):
            if val == -1:
                permutation[k] = dim
                dim += 1
                missing += 1
        if missing:
            op += [1] * missing
            prog.append((_RESHAPE, tuple(op)))
        prog.append((_PERM, tuple(permutation)))
        prep.append(prog)
        aligned.append(tuple(op[d] for d in permutation))

    # contract left to right
    pairs = []
    a = aligned[0]
    for b in aligned[1:]:
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a[d] != 1 and b[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        prog_a = [(_SUM, tuple(a_sum), True)] if a_sum else []
        prog_b = [(_SUM, tuple(b_sum), True)] if b_sum else []
        a = tuple(1 if d in a_sum else s for d, s in enumerate(a))
        b = tuple(1 if d in b_sum else s for d, s in enumerate(b))
        pl, pr, kind, po, out = _pair_plan(a, b, sum_dims)
        pairs.append((prog_a + pl, prog_b + pr, kind, po))
        a = out

    final = []
    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            final = [(_RESHAPE, a[:out_num_dim])]
        else:
            final = [(_SUM, tuple(range(out_num_dim, perm_index)), False)]

    # the programs between the kernels, joined and simplified: the first operand up to the first product; per
    # later operand its own program, the product, and the program up to the next product (or the end)
    tails = [pair[0] for pair in pairs[1:]] + [final]
    first = _simplify(prep[0] + (pairs[0][0] if pairs else final), shapes[0])
    steps = []
    left = _shape_after(prep[0] + (pairs[0][0] if pairs else []), shapes[0])
    for k, (pair, tail) in enumerate(zip(pairs, tails)):
        _, prog_b, kind, prog_o = pair
        right_prog = prep[k + 1] + prog_b
        right = _shape_after(right_prog, shapes[k + 1])
        if kind == _MUL:
            product = _broadcast(left, right)
        else:
            product = (left[0], left[1], right[2])
        steps.append((_simplify(right_prog, shapes[k + 1]), kind, _simplify(prog_o + tail, product)))
        if k + 1 < len(pairs):
            left = _shape_after(prog_o + tail, product)
    return first, tuple(steps), any(0 in shape for shape in shapes)


_SCALAR_TYPE = {"Float32": "Float", "Float64": "Double", "Float16": "Half", "BFloat16": "BFloat16",
                "Int64": "Long", "Int32": "Int", "Int16": "Short", "Int8": "Char", "UInt8": "Byte", "Bool": "Bool",
                "Complex64": "ComplexFloat", "Complex128": "ComplexDouble"}


def _check_bmm_python(left_dtype, right_dtype) -> bool:
    """ATen's ``bmm`` checks on the two dtypes (a ``constexpr`` in graphs); returns True.

    Raises:
        NotImplementedError: booleans ('"bmm" not implemented for 'Bool'').
        RuntimeError: two dtypes ("expected scalar type Float but found Double": the left's, then the right's).
    """
    left, right = (_SCALAR_TYPE.get(str(t), str(t)) for t in (left_dtype, right_dtype))
    if left == "Bool":
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if left != right:
        raise RuntimeError(f"expected scalar type {left} but found {right}")
    return True


def _run(x, prog):
    """Apply a unary program (see :func:`_plan_python`) to the MindSpore tensor ``x``; unrolled in graphs."""
    for ins in prog:
        if ins[0] == _DIAG:
            x = ms.ops.diagonal(x, 0, ins[1], ins[2])
        elif ins[0] == _PERM:
            x = ms.ops.transpose(x, ins[1])
        elif ins[0] == _RESHAPE:
            x = ms.ops.reshape(x, ins[1])
        else:
            x = ms.ops.sum(x, ins[1], ins[2])
    return x


def _shapes(tensors):
    return tuple(tuple(t.shape) for t in tensors)


def _einsum(equation, operands):
    """The computation on MindSpore tensors ``operands`` (module docstring)."""
    first, steps, empty = _plan(equation, _shapes(operands))
    acc = _run(operands[0], first)
    for (prog, kind, after), operand in zip(steps, operands[1:]):
        right = _run(operand, prog)
        if kind == _MUL:
            acc = acc * right
        else:
            _check_bmm(acc.dtype, right.dtype)
            acc = ms.ops.bmm(acc, right)
        acc = _run(acc, after)
    if empty:  # an empty operand: the result is empty or sums of nothing, zeros; so are all gradients
        acc = ms.ops.zeros_like(ms.ops.stop_gradient(acc))
    return acc


def einsum(*args):
    """PyTorch's ``torch.einsum(equation, *operands)`` (also ``einsum(equation, [operands])`` and the sublist
    format ``einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])``); the module docstring says how and what
    it raises. Returns a tensor of the shape the equation's output subscripts give."""
    if len(args) < 2:
        raise ValueError(_NO_OPERAND)
    if isinstance(args[0], str):
        equation = args[0]
        operands = args[1:]
    else:  # sublist format
        equation = _sublist_equation(args[1::2], args[-1] if len(args) % 2 == 1 else None)
        operands = args[:-1:2] if len(args) % 2 == 1 else args[::2]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
        if not operands:
            raise ValueError(_NO_OPERAND)
    return cast_to_adapter_tensor(_einsum(equation, cast_to_ms_tensor(tuple(operands))))


def apply() -> None:
    global ms, cast_to_ms_tensor, cast_to_adapter_tensor, _plan, _sublist_equation, _check_bmm
    import mindspore
    import mindtorch.torch as torch
    import mindtorch.torch.functional as functional
    from mindspore.ops.primitive import constexpr
    from mindtorch.torch.tensor import cast_to_adapter_tensor as to_adapter, cast_to_ms_tensor as to_ms

    ms, cast_to_ms_tensor, cast_to_adapter_tensor = mindspore, to_ms, to_adapter
    _plan = constexpr(_plan_python)
    _sublist_equation = constexpr(_sublist_equation_python)
    _check_bmm = constexpr(_check_bmm_python)
    original = get_replaced(functional, "einsum", NAME)
    patch_attr(functional, "einsum", einsum)
    if get_replaced(torch, "einsum", NAME) is original:
        patch_attr(torch, "einsum", einsum)


NAME = "einsum"
PATCH = Patch(NAME, "torch.einsum by PyTorch's algorithm from transpose/reshape/diagonal/sum/mul/bmm (MindSpore's "
                        "Einsum primitive has no CPU or Ascend kernel: 'Unsupported op [Einsum] on CPU'); PyTorch's "
                        "contraction order, errors, list and sublist forms",
              "post-import", apply, replaces=("torch.functional.einsum", "torch.einsum"))

"""Contractions (dot, matmul, tensordot, einsum, trace): the linear algebra that is
not numpy.linalg, all through lax.dot_general."""
from __future__ import annotations

import builtins
import string

from .. import dtypes as _dtypes
from .. import lax
from ..core import at_user_line
from ._util import (
    _broadcast_shapes, _canon_axis, _operand, _promote_no_broadcast, _shape, _t,
    broadcast_to, ndim)
from ._ufuncs import multiply
from ._shapes import diagonal, ravel, reshape, squeeze
from ._reductions import sum


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _dot_general(a, b, dimension_numbers, name):
    """lax.dot_general with the contracted sizes checked at the user's line; bool
    operands contract as ints and the result is `any(a and b)`, as in NumPy/JAX."""
    (lc, rc), (lb, rb) = dimension_numbers
    sa, sb = _shape(a), _shape(b)
    if [sa[i] for i in lc + lb] != [sb[i] for i in rc + rb]:
        raise ValueError(at_user_line(
            f"{name}: shapes {sa} and {sb} not aligned: axes {tuple(lc + lb)} of the first "
            f"(sizes {tuple(sa[i] for i in lc + lb)}) != axes {tuple(rc + rb)} of the "
            f"second (sizes {tuple(sb[i] for i in rc + rb)})"))
    if _t(a).dtype != _dtypes.bool_:
        return lax.dot_general(a, b, dimension_numbers)
    a, b = (lax.convert_element_type(x, _dtypes.int32) for x in (a, b))
    return lax.ne(lax.dot_general(a, b, dimension_numbers), 0)


def dot(a, b):
    a, b = _promote_no_broadcast([_operand(a), _operand(b)])
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    contract_b = 0 if ndim(b) == 1 else ndim(b) - 2
    return _dot_general(a, b, (((ndim(a) - 1,), (contract_b,)), ((), ())), "dot")


def matmul(a, b):
    a, b = _promote_no_broadcast([_operand(a), _operand(b)])
    if ndim(a) == 0 or ndim(b) == 0:
        raise ValueError(at_user_line("matmul: input operand does not have enough "
                                      "dimensions (use * for scalars)"))
    contracted = builtins.max(ndim(b) - 2, 0)  # b's axis that meets a's last
    if _shape(a)[-1] != _shape(b)[contracted]:
        raise ValueError(at_user_line(
            f"matmul: shapes {_shape(a)} and {_shape(b)} are not aligned: "
            f"{_shape(a)[-1]} (last axis of the first) != {_shape(b)[contracted]} "
            f"({'second-to-last' if ndim(b) > 1 else 'only'} axis of the second)"))
    if ndim(a) == 1 or ndim(b) == 1:
        # a vector contracts as it is, as under JAX: a bool one converted for the
        # dot then reaches XLA's simplifier as JAX hands it over (fuzz jit 5326)
        return _dot_general(a, b, (((ndim(a) - 1,), (contracted,)), ((), ())), "matmul")
    a_batch, b_batch = _shape(a)[:-2], _shape(b)[:-2]
    nb = builtins.max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nb - len(a_batch)) + a_batch
    b_batch = (None,) * (nb - len(b_batch)) + b_batch
    # as JAX's matmul: a batch axis of size 1 (or missing) on one side is a free axis
    # of the other, not broadcast, and the result's axes are moved into place after
    # the dot; a transpose then sits between the dot and what reads it, as under
    # JAX's jit, where XLA would otherwise fold a convert of a bf16 product into the
    # dot and skip its rounding (fuzz jit seed 25017)
    a_squeeze, b_squeeze, a_dims, b_dims = [], [], [], []
    # output positions of each kind of axis; `unit_at`: size 1 on both sides, squeezed
    batch_at, a_free_at, b_free_at, unit_at = [], [], [], []
    for i, (na, nb_) in enumerate(zip(a_batch, b_batch)):
        if na == 1 and nb_ == 1:
            a_squeeze.append(i - (nb - ndim(a) + 2))
            b_squeeze.append(i - (nb - ndim(b) + 2))
            unit_at.append(i)
        elif na is None or nb_ is not None and na == 1:
            b_free_at.append(i)
            if na is not None:
                a_squeeze.append(i - (nb - ndim(a) + 2))
        elif nb_ is None or nb_ == 1:
            a_free_at.append(i)
            if nb_ is not None:
                b_squeeze.append(i - (nb - ndim(b) + 2))
        elif na == nb_:
            a_dims.append(i - (nb - ndim(a) + 2) - len(a_squeeze))
            b_dims.append(i - (nb - ndim(b) + 2) - len(b_squeeze))
            batch_at.append(i)
        else:
            raise ValueError(at_user_line(
                f"matmul: batch shapes {_shape(a)[:-2]} and {_shape(b)[:-2]} of "
                f"{_shape(a)} and {_shape(b)} do not broadcast"))
    a = lax.squeeze(a, tuple(a_squeeze)) if a_squeeze else a
    b = lax.squeeze(b, tuple(b_squeeze)) if b_squeeze else b
    out = _dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 2,)), (tuple(a_dims), tuple(b_dims))),
                       "matmul")
    order = batch_at + a_free_at + [nb] + b_free_at + [nb + 1]  # the dot's result axes
    permutation = tuple(sorted(range(len(order)), key=order.__getitem__))
    if permutation != tuple(range(len(order))):
        out = lax.transpose(out, permutation)
    if unit_at:  # as JAX puts them back: a broadcast
        shape = list(_shape(out))
        for i in unit_at:
            shape.insert(i, 1)
        out = lax.broadcast_in_dim(out, tuple(shape),
                                   tuple(i for i in range(len(shape)) if i not in unit_at))
    return out


def vdot(a, b):
    """The dot of the flattened arrays, the first conjugated (NumPy's and JAX's)."""
    a = _operand(a)
    a = lax.conj(a) if _dtypes.is_complex(_t(a).dtype) else a
    return dot(ravel(a), ravel(_operand(b)))


def inner(a, b):
    a, b = _promote_no_broadcast([_operand(a), _operand(b)])
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return _dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())), "inner")


def outer(a, b):
    a, b = ravel(_operand(a)), ravel(_operand(b))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a, b, axes=2):
    a, b = _promote_no_broadcast([_operand(a), _operand(b)])
    if isinstance(axes, int):
        ca = tuple(range(ndim(a) - axes, ndim(a)))
        cb = tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca = tuple(_canon_axis(x, ndim(a)) for x in ca)
        cb = tuple(_canon_axis(x, ndim(b)) for x in cb)
    return _dot_general(a, b, ((ca, cb), ((), ())), "tensordot")


def einsum(subscripts, *operands, optimize=False, precision=None):
    """Contract operands left to right with dot_general (no contraction-order search);
    two operands as JAX's numpy einsum contracts them."""
    operands = _promote_no_broadcast([_operand(o) for o in operands])
    inputs, output = _parse_einsum(subscripts, [ndim(o) for o in operands])
    sizes = {}  # a label's size; size-1 axes broadcast (as ... axes do in NumPy)
    for spec, op in zip(inputs, operands):
        for c, n in zip(spec, _shape(op)):
            m = sizes.setdefault(c, n)
            if m != n and 1 not in (m, n):
                raise ValueError(at_user_line(
                    f"einsum: size mismatch for label {c!r}: {m} != {n}"))
            sizes[c] = builtins.max(m, n)
    if len(operands) == 2:
        inputs, operands = _drop_singletons(inputs, operands)
    else:
        operands = [broadcast_to(op, tuple(sizes[c] for c in spec))
                    for spec, op in zip(inputs, operands)]
    counts = {}
    for spec in inputs:
        for c in spec:
            counts[c] = counts.get(c, 0) + 1
    ops = []
    for spec, op in zip(inputs, operands):
        op, spec = _einsum_diagonals(op, spec)
        # sum out labels that appear nowhere else
        lonely = [i for i, c in enumerate(spec) if counts[c] == 1 and c not in output]
        if lonely:
            op = lax.reduce_sum(op, lonely)
            for c in (spec[i] for i in lonely):
                counts[c] -= 1
            spec = "".join(c for i, c in enumerate(spec) if i not in lonely)
        ops.append((op, spec))
    op, spec = ops[0]
    for other, ospec in ops[1:]:
        for c in spec + ospec:
            counts[c] -= 1
        keep = set(output) | {c for c, k in counts.items() if k > 0}
        batch = [c for c in spec if c in ospec and c in keep]
        contract = [c for c in spec if c in ospec and c not in keep]
        if len(ops) == 2:  # JAX's numpy einsum's one dot, so its sums run in the same order
            op, spec, other, ospec, batch, contract = _jax_pair(
                op, spec, other, ospec, batch, contract, output)
        dims = (((tuple(spec.index(c) for c in contract), tuple(ospec.index(c) for c in contract)),
                 (tuple(spec.index(c) for c in batch), tuple(ospec.index(c) for c in batch))))
        op = _dot_general(op, other, dims, "einsum")
        spec = "".join(batch) + "".join(c for c in spec if c not in batch and c not in contract) \
            + "".join(c for c in ospec if c not in batch and c not in contract)
        for c in spec:
            counts[c] = counts.get(c, 0) + 1
    extra = [i for i, c in enumerate(spec) if c not in output]
    if extra:
        op = lax.reduce_sum(op, extra)
        spec = "".join(c for c in spec if c in output)
    return lax.transpose(op, [spec.index(c) for c in output])


def _drop_singletons(inputs, operands):
    """Two operands as JAX's numpy einsum takes them: a size-1 axis whose label the other
    operand has longer is squeezed out rather than broadcast, the label left to the
    other (a free axis of its, or summed alone)."""
    specs, ops = [], []
    for k, (spec, op) in enumerate(zip(inputs, operands)):
        ospec, oshape = inputs[1 - k], _shape(operands[1 - k])
        drop = [i for i, (c, n) in enumerate(zip(spec, _shape(op)))
                if n == 1 and c in ospec and oshape[ospec.index(c)] != 1]
        specs.append("".join(c for i, c in enumerate(spec) if i not in drop))
        ops.append(squeeze(op, tuple(drop)) if drop else op)
    return specs, ops


def _jax_pair(op, spec, other, ospec, batch, contract, output):
    """Two operands as JAX's numpy einsum contracts them: batch labels in the output's
    order, contracted ones sorted, and the second operand first (opt_einsum's pair comes
    last first) unless the first operand first leaves the output's order."""
    batch, contract = [c for c in output if c in batch], sorted(contract)
    rest = lambda s: "".join(c for c in s if c not in batch and c not in contract)
    if "".join(batch) + rest(spec) + rest(ospec) != output:
        op, spec, other, ospec = other, ospec, op, spec
    return op, spec, other, ospec, batch, contract


def _parse_einsum(subscripts, ranks):
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise ValueError(at_user_line(f"einsum: {len(inputs)} input specs for "
                                      f"{len(ranks)} operands"))
    if "..." in subscripts:
        unused = [c for c in string.ascii_letters if c not in subscripts]
        ell = builtins.max((r - len(s.replace("...", "")) for s, r in zip(inputs, ranks)
                   if "..." in s), default=0)
        fill = "".join(unused[:ell])
        inputs = [s.replace("...", fill[ell - (r - len(s.replace("...", ""))):])
                  for s, r in zip(inputs, ranks)]
        if arrow:
            rhs = rhs.replace("...", fill)
    for s, r in zip(inputs, ranks):
        if len(s) != r:
            raise ValueError(at_user_line(f"einsum: spec {s!r} has {len(s)} labels for an "
                                          f"operand of rank {r}"))
    if not arrow:
        counts = {}
        for c in "".join(inputs):
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
        if "..." in subscripts:
            rhs = fill + "".join(c for c in rhs if c not in fill)
    return inputs, rhs


def _einsum_diagonals(op, spec):
    """Repeated labels in one operand ('ii->i'): keep the diagonal."""
    while len(set(spec)) != len(spec):
        c = next(c for c in spec if spec.count(c) > 1)
        i, j = spec.index(c), spec.index(c, spec.index(c) + 1)
        op = diagonal(op, 0, i, j)
        spec = "".join(x for k, x in enumerate(spec) if k not in (i, j)) + c
    return op, spec

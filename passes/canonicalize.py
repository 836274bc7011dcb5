"""Canonicalization: fold op(x, x), x / broadcast(b) to x * broadcast(1 / b),
XLA's other value-changing float rewrites, convert(bool) * y to a select, empty
values to constants, a dot_general of unit contractions to a multiply, unit free
dimensions out of a dot_general, and erase dead code, as XLA's simplifier does
after us. (A dot_general of a converted bool stays as it is, for XLA's simplifier
to see: opinfo.bool_to_float_read_by_dot.)

The float rewrites (a / sqrt(b) to a * rsqrt(b), (a / b) / c to a / (b * c), ...)
are ARITHMETIC_RULES, applied as XLA applies them, until nothing changes.

Idempotent ops fold (and, or, max, min, select); only float (f32, f64) divides
become multiplies. XLA does all four, but never inside a fusion: a fusion output only dead code read
vanishes under its feet (XLA CPU aborts, found by the random-program test), and a
fused divide stays a divide per element. Run before the fusion passes, this lets
them see, and fuse, the program XLA would see. XLA's simplifier is the same on
every backend, so this is a pass of the pipeline rather than a Backend hook.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from . import opinfo
from .framework import Pass, PassContext
from .graph import blocks, folds_to_constant
from .rewrite import copy_reducer


class Canonicalize(Pass):
    name = "canonicalize"
    moves_calls = False  # it rewrites StableHLO arithmetic only

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        with module.context:
            for name, block in blocks(module, ctx.functions):
                func = block.owner.operation
                constants = ({func.regions[0].blocks[0].arguments[k]
                              for k in ctx.constant_args.get(name, ())}
                             if func.name == "func.func" else set())
                canonicalize_block(block, constants)


def canonicalize_block(block: ir.Block, constant_args=frozenset()) -> None:
    """`constant_args`: the block arguments every call passes a constant. Each sweep
    visits the ops the last one left; the rules say whether they added or erased
    any (True), and only then is the block listed again (a listing costs 0.3 us an
    op, and most sweeps change nothing). The last sweep, for dead ops, lists it
    whole: a rule may have made an op it then did not use."""
    for op in _ops(block):
        _empty_to_constant(op)
        if opinfo.name(op) == opinfo.REDUCE:  # before the rules that see through it
            _unit_reduce_to_reshape(op)
    ops = _simplify_arithmetic(block, constant_args)
    # before the multiplies that read them, as XLA's simplifier visits operands first
    changed = False
    for op in ops:
        name = opinfo.name(op)
        if name not in opinfo.FOLDS_IDENTICAL_OPERANDS:
            continue
        operands = list(op.operation.operands)
        if name in opinfo.IDEMPOTENT and operands[-1] == operands[-2]:
            op.operation.results[0].replace_all_uses_with(operands[-1])
        elif name == "stablehlo.compare" and operands[0] == operands[1]:
            changed |= _self_compare_to_constant(op)
    ops = _ops(block) if changed else ops
    folded, changed = {}, False
    for op in ops:
        if opinfo.name(op) == "stablehlo.multiply":
            changed |= _bool_multiply_to_select(
                op, lambda v: folds_to_constant(v, constant_args, folded))
        elif opinfo.name(op) == "stablehlo.dot_general" and not any(
                map(opinfo.bool_for_a_dot, op.operation.operands)):
            changed |= _outer_product_to_multiply(op) or _squeeze_unit_free_dims(op)
    ops, changed = _ops(block) if changed else ops, False
    for op in ops:
        if opinfo.name(op) in ("stablehlo.divide", "stablehlo.remainder"):
            changed |= _guard_integer_division(op)
    for op in _ops(block) if changed else ops:
        if opinfo.name(op) in ELEMENTWISE:
            _sink_unit_reshapes(op)
        elif opinfo.name(op) == "stablehlo.reshape":
            _fold_reshape_of_reshape(op)
    _erase_dead(_ops(block))


def _ops(block: ir.Block) -> list:
    """The block's ops but its terminator."""
    return list(block.operations)[:-1]


def _erase_dead(ops: list) -> list:
    """Erase the ops of `ops` (a block's, in order) that nothing reads; the rest."""
    live = []
    for op in reversed(ops):
        operation = op.operation
        if operation.name in opinfo.KNOWN and not any(map(opinfo.is_read, operation.results)):
            operation.erase()
        else:
            live.append(op)
    live.reverse()
    return live


def _simplify_arithmetic(block: ir.Block, constant_args) -> list:
    """XLA's simplifier rewrites float arithmetic (the rules below) until nothing
    changes, visiting operands before their users and dropping what died; a rewrite
    can enable another (a / (b / sqrt(c)) -> (a * sqrt(c)) / b -> ...). Dead code goes
    first: XLA's one-use conditions count live users. Returns the block's ops."""
    ops = _erase_dead(_ops(block))
    for _ in range(_MAX_SWEEPS):
        folded: dict = {}
        is_constant = lambda x: folds_to_constant(x, constant_args, folded)  # noqa: E731
        changed = False
        for op in ops:
            for rule in ARITHMETIC_RULES.get(opinfo.name(op), ()):
                replacement = rule(op, is_constant)
                if replacement is not None:
                    op.operation.results[0].replace_all_uses_with(replacement)
                    changed = True
                    break
        if not changed:
            return ops
        ops = _erase_dead(_ops(block))
    return ops


_MAX_SWEEPS = 16  # each sweep that changes something shrinks what the rules match


# elementwise at one shape (a bitcast_convert between widths changes it)
ELEMENTWISE = (opinfo.CHEAP_ELEMENTWISE | opinfo.EXPENSIVE_ELEMENTWISE) - {
    "stablehlo.bitcast_convert"}


def _unit_source(value) -> ir.Value | None:
    """What `value` is a unit-dim reshape of (a reshape, or a broadcast_in_dim that
    only adds unit dims, in order), or None."""
    op = value.owner
    if isinstance(op, ir.Block) or op.name not in ("stablehlo.reshape",
                                                   "stablehlo.broadcast_in_dim"):
        return None
    if op.name == "stablehlo.broadcast_in_dim":
        dims = opinfo.int_array(op.attributes["broadcast_dimensions"])
        if dims != sorted(dims):
            return None
    source = op.operands[0]
    before, after = source.type.shape, value.type.shape
    return source if [d for d in before if d != 1] == [d for d in after if d != 1] else None


def _reshaped(value, result_type, anchor) -> ir.Value:
    """`value` as `result_type` by one reshape before `anchor` of what unit-dim
    reshapes made it from (none if that already is)."""
    source = _unit_source(value)
    while source is not None:
        value, source = source, _unit_source(source)
    if value.type == result_type:
        return value
    with anchor.location, ir.InsertionPoint(anchor):
        return ir.Operation.create("stablehlo.reshape", operands=[value],
                                   results=[result_type]).results[0]


def _unit_reduce_to_reshape(reduce) -> None:
    """A reduce over unit dims only is a reshape, as XLA's simplifier makes it after
    us; left to XLA, it reads to our passes as a reshape (layouts) that no fusion may
    take in, and splits a kernel in two (the backward pass of sum(..., keepdims=True)),
    and it hides what it reads from the rules that see through it (log(pow(a, x)) past
    a max over no dims: fuzz --bitwise, jit seed 5050)."""
    if not _unit_reduce(reduce):
        return
    result = reduce.operation.results[0]
    result.replace_all_uses_with(_reshaped(reduce.operation.operands[0], result.type, reduce))


def _sink_unit_reshapes(op) -> None:
    """op(reshape(a), reshape(b)) -> reshape(op(a, b)), when every operand is a
    unit-dim reshape of a value of one shape and every reader of the result
    reshapes it again, as XLA's reshape-mover does (it is off for our fused
    modules): the op then fuses with the producers of a and b, and the two
    reshapes fold."""
    operation = op.operation
    sources = []
    for v in operation.operands:  # most ops read no reshape: the first says so
        sources.append(_unit_source(v))
        if sources[-1] is None:
            return
    result = operation.results[0]
    if (len({str(s.type.shape) for s in sources}) != 1
            or not all(u.owner.name == "stablehlo.reshape" or _unit_reduce(u.owner)
                       for u in result.uses)):
        return
    shape = sources[0].type.shape
    element = ir.RankedTensorType(result.type).element_type
    with op.location, ir.InsertionPoint(op):
        named = [operation.attributes[i] for i in range(len(operation.attributes))]
        attributes = {a.name: a.attr for a in named}  # iterating gives names only
        sunk = ir.Operation.create(operation.name, operands=sources, attributes=attributes,
                                   results=[ir.RankedTensorType.get(shape, element)])
    result.replace_all_uses_with(_reshaped(sunk.results[0], result.type, op))


def _unit_reduce(op) -> bool:
    """Whether `op` is a one-operand reduce over unit dims of x only (none, too): XLA's
    HandleReduce makes any reduce that keeps the element count a reshape, whatever
    its body and init (it takes the init for the body's identity)."""
    operation = op.operation
    if operation.name != opinfo.REDUCE or len(operation.operands) != 2:
        return False
    x = operation.operands[0]
    dims = opinfo.int_array(operation.attributes["dimensions"])
    return (opinfo.static_tensor(x.type) and opinfo.num_elements(x.type) > 0
            and all(x.type.shape[d] == 1 for d in dims))


def _fold_reshape_of_reshape(reshape) -> None:
    """reshape(unit-dim reshape(x)) -> reshape(x), or x itself at x's type."""
    operand = reshape.operation.operands[0]
    if _unit_source(operand) is not None:
        result = reshape.operation.results[0]
        result.replace_all_uses_with(_reshaped(operand, result.type, reshape))


def _self_compare_to_constant(compare) -> bool:
    """compare(x, x) of integers or bools is a constant (EQ, LE, GE true), as XLA's
    simplifier folds it after us; left to XLA, a fusion reading it reads a broadcast
    constant, and a reverse of that fusion made XLA CPU's simplifier abort ("Invalid
    binary instruction opcode fusion", fuzzer, hlo-opt seed 453). Floats stay: NaN."""
    result = compare.operation.results[0]
    operand = compare.operation.operands[0]
    if (not opinfo.static_tensor(result.type)
            or not isinstance(ir.RankedTensorType(operand.type).element_type, ir.IntegerType)):
        return False
    # the attribute prints as #stablehlo<comparison_direction NE>
    direction = str(compare.attributes["comparison_direction"]).rstrip(">").split()[-1]
    value = direction in ("EQ", "LE", "GE")
    with compare.location, ir.InsertionPoint(compare):
        folded = ir.Operation.create("stablehlo.constant", results=[result.type], attributes={
            "value": ir.DenseElementsAttr.get_splat(
                result.type, ir.BoolAttr.get(value))})
    result.replace_all_uses_with(folded.results[0])
    return True


def _safe_divisor(divisor) -> bool:
    """Whether no fold can make an integer division by `divisor` trap: a constant
    holding neither 0 nor -1, or the select(d == 0 [or overflow], 1, d) that
    _guard_integer_division made (a select of 1 alone is not: where(p, 1, y) is 0
    wherever y is and p is not)."""
    op = divisor.owner
    if isinstance(op, ir.Block):
        return False
    if op.name == "stablehlo.select":
        unsafe = op.operands[0].owner
        if not isinstance(unsafe, ir.Block) and unsafe.name == "stablehlo.or":
            unsafe = unsafe.operands[0].owner
        return (_constant_integers(op.operands[1]) == {1} and not isinstance(unsafe, ir.Block)
                and unsafe.name == "stablehlo.compare" and unsafe.operands[0] == op.operands[2]
                and _constant_integers(unsafe.operands[1]) == {0})
    values = _constant_integers(divisor)
    return values is not None and not values & {0, -1}


def _constant_integers(value) -> set[int] | None:
    """The integers a small constant integer tensor holds, or a broadcast of one
    (a divisor from Python, such as unravel_index's dims: guarded, it left XLA a
    dozen constant compares per division, folded after our fusions were made, so
    each became a broadcast kernel of its own), or None."""
    attr = _constant_attribute(value)
    if attr is None or not isinstance(attr.type.element_type, ir.IntegerType):
        return None
    if attr.is_splat:
        return {ir.IntegerAttr(attr.get_splat_value()).value}
    if len(attr) > _LISTED_DIVISORS:
        return None
    return set(ir.DenseIntElementsAttr(attr))


_LISTED_DIVISORS = 4096  # larger constant divisors are guarded unread


def _guard_integer_division(op) -> bool:
    """An integer divide or remainder XLA folds to a constant divides in its
    evaluator, which kills the process (SIGFPE) on a zero divisor or INT_MIN / -1;
    at run time XLA gives x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN
    and INT_MIN % -1 = 0. Which divisions XLA folds is not ours to know: a module
    holding fusions goes through MHLO, whose canonicalizer folds x ^ x, x - x, x & 0,
    ... to constants everywhere, before XLA's own simplifier (fuzzer: hlo-opt seed
    7260, x ^ x // x ^ x; hlo-opt loop seed 71, `fmod(x <= x, x > x)`). So every
    integer divisor but a safe constant (_safe_divisor) is made safe and those
    results selected, as tracehlo's lowering does; XLA folds it all where constant."""
    operation = op.operation
    result_type = operation.results[0].type
    element = ir.RankedTensorType(result_type).element_type
    if (not isinstance(element, ir.IntegerType) or element.width == 1
            or not opinfo.static_tensor(result_type)):
        return False
    x, divisor = operation.operands
    if _safe_divisor(divisor):
        return False
    signed = not element.is_unsigned

    def splat(number):
        # the bindings take an int64: u64's all ones is passed as its bits, -1
        bits = number - (1 << 64) if number >= 1 << 63 else number
        return ir.Operation.create("stablehlo.constant", results=[result_type], attributes={
            "value": ir.DenseElementsAttr.get_splat(
                result_type, ir.IntegerAttr.get(element, bits))}).results[0]

    def create(name, operands, result=None, **attributes):
        return ir.Operation.create(f"stablehlo.{name}", results=[result or bools],
                                   operands=operands,
                                   attributes=attributes).results[0]

    def equals(value, number):
        return create("compare", [value, splat(number)],
                      comparison_direction=stablehlo.ComparisonDirectionAttr.get("EQ"))

    all_ones = -1 if signed else (1 << element.width) - 1
    with op.location, ir.InsertionPoint(op):
        bools = ir.RankedTensorType.get(ir.RankedTensorType(result_type).shape,
                                        ir.IntegerType.get_signless(1))
        by_zero = equals(divisor, 0)
        unsafe = by_zero
        if signed:
            overflows = create("and", [equals(x, -(1 << (element.width - 1))),
                                       equals(divisor, -1)])
            unsafe = create("or", [by_zero, overflows])
        safe_divisor = create("select", [unsafe, splat(1), divisor], result_type)
        quotient = create(operation.name.split(".")[1], [x, safe_divisor], result_type)
        by_zero_result = splat(all_ones) if operation.name == "stablehlo.divide" else x
        guarded = create("select", [by_zero, by_zero_result, quotient], result_type)
    operation.results[0].replace_all_uses_with(guarded)
    return True


def _empty_to_constant(op) -> None:
    """A zero-element result holds nothing: XLA makes it a constant, and what only
    it read dies under XLA's feet (found by random programs: a sibling reduce read
    only through a zero-element slice made XLA CPU abort, "has_layout()")."""
    operation = op.operation
    if (opinfo.name(op) not in opinfo.KNOWN or opinfo.name(op) == "stablehlo.constant"
            or len(operation.results) != 1 or not opinfo.static_tensor(operation.results[0].type)
            or opinfo.num_elements(operation.results[0].type)):
        return
    result = operation.results[0]
    # parsed whole: the bindings cannot hand a complex dense attribute to Python
    # (a complex zero-element result raised TypeError here)
    empty = ir.Operation.parse(f'"stablehlo.constant"() {{value = dense<> : {result.type}}} '
                               f': () -> {result.type} {operation.location}',
                               context=operation.context)
    ir.InsertionPoint(op).insert(empty)
    result.replace_all_uses_with(empty.results[0])


# where XLA's simplifier makes a divide a multiply by the reciprocal, in the element
# type (measured: f16 too, dirichlet's softmax; complex too, normal's complex samples
# (re + i im) / sqrt(2)). Not bf16: XLA CPU computes it in f32, the reciprocal too.
_RECIPROCAL_TYPES = ("f16", "f32", "f64", "complex<f32>", "complex<f64>")


def _multiply_by_reciprocal(divide, is_constant) -> ir.Value | None:
    """x / broadcast(b) -> x * broadcast(1 / b) for b smaller than x, and x / c ->
    x * (1 / c) for a c XLA folds to a constant (a constant, or a convert of one), as
    XLA's simplifier does; then convert(p) / 0 is select(p, inf, 0), 0 where p is
    false (fuzzer, jit seed 2073: a bool divided by a converted false). Not in bf16
    (_RECIPROCAL_TYPES: a bf16 reciprocal changed quotients, found by the fuzzer).
    x / c stays where XLA folds x to a constant too
    (`is_constant(x)`): its simplifier leaves it, and it folds the quotient, correctly
    rounded (truncated_normal's bound / sqrt(2) after XLA inlines the call: -1.5 /
    sqrt(2) is one f32 ulp from -1.5 * (1 / sqrt(2)); JAX's jitted samples follow the
    quotient). x / broadcast(b) it rewrites for a constant x too (array bounds), and
    for a scalar b XLA does not fold only where the broadcast is b's one use; a b of
    rank 1 or more, whatever else reads it (measured, jaxlib 0.10.2: a / s + s and
    a / s beside s + 1 keep their divides, a / b beside b + 1 or sort(b) does not,
    nor f's chisquare(2.0) / 2.0; fuzzer, jit seed 10651: a reciprocal below the
    smallest normal float is 0 under XLA CPU, so the quotient is 0 too)."""
    x, divisor = divide.operation.operands
    spread = divisor.owner
    if (isinstance(spread, ir.Block)
            or str(ir.RankedTensorType(x.type).element_type) not in _RECIPROCAL_TYPES):
        return None
    if _folded_constant(divisor):
        if is_constant(x):
            return None
        spread, b = None, divisor
    elif spread.name == "stablehlo.broadcast_in_dim":
        b = spread.operands[0]
        if (opinfo.num_elements(b.type) >= opinfo.num_elements(divisor.type)
                or not (b.type.shape or _one_use(b) or is_constant(b))):
            return None
    else:
        return None
    element = ir.RankedTensorType(b.type).element_type
    number = None if isinstance(element, ir.ComplexType) else _constant_number(b)
    with divide.location, ir.InsertionPoint(divide):
        if number is not None:  # folded here, as XLA folds it: see _reciprocal
            reciprocal = _splat_value(element, _reciprocal(number[0]), b.type)
        else:
            ones = _splat_value(element, 1.0, b.type)
            reciprocal = ir.Operation.create("stablehlo.divide", results=[b.type],
                                             operands=[ones, b]).results[0]
        if spread is not None:
            spread_back = spread.clone(ip=ir.InsertionPoint(divide))
            spread_back.operands[0] = reciprocal
            reciprocal = spread_back.results[0]
        product = _create("multiply", [x, reciprocal], divide.result.type)
        if spread is not None and b.type.shape and not is_constant(b):
            product.owner.attributes[_LATE_PRODUCT] = ir.UnitAttr.get()
        return product


# marks a multiply made of x / broadcast(b), b of rank 1 or more and not a constant:
# XLA rewrites that divide outside its simplifier's divide rules (which take constant
# and scalar divisors only), too late for its bool-multiply rule, so such a product
# stays a multiply (_bool_multiply_to_select; fuzz jit --transform vmap seed 3026)
_LATE_PRODUCT = "tracehlo.late_product"


def _reciprocal(number: float) -> float:
    """1 / `number` as XLA's constant folder makes it, before the multiply reads it
    (computed in double, then rounded to the element type: exact as one rounding for
    f16, f32 and f64). Made here, the constant is in the multiply's kernel, as in JAX's
    jit, where LLVM turns x * -1 into a sign flip; left as a divide for XLA to fold,
    it reached our fusion as a parameter, and a runtime multiply flushed a subnormal
    x to -0 (x / -1 of the smallest f32 subnormal)."""
    return math.copysign(math.inf, number) if number == 0 else 1.0 / number


def _splat_value(element: ir.Type, number, result_type: ir.Type) -> ir.Value:
    """A scalar constant broadcast to `result_type`, as JAX writes constants: a fusion
    takes the broadcast in, and XLA's simplifier matches it as one constant. Floats,
    complex (real part `number`), integers and bools. Creates ops at the current
    insertion point."""
    scalar = ir.RankedTensorType.get([], element)
    if isinstance(element, ir.ComplexType):  # parsed whole: Python has no complex attribute
        constant = ir.Operation.parse(f'"stablehlo.constant"() {{value = dense<({number!r}, '
                                      f'0.0)> : {scalar}}} : () -> {scalar}')
        ir.InsertionPoint.current.insert(constant)
        return _spread(constant.results[0], result_type)
    if isinstance(element, ir.IntegerType):
        attr = (ir.BoolAttr.get(bool(number)) if element.width == 1
                else ir.IntegerAttr.get(element, int(number)))
    else:
        attr = ir.FloatAttr.get(element, number)
    value = ir.Operation.create("stablehlo.constant", results=[scalar], attributes={
        "value": ir.DenseElementsAttr.get_splat(scalar, attr)}).results[0]
    return _spread(value, result_type)


def _spread(scalar: ir.Value, result_type: ir.Type) -> ir.Value:
    """`scalar` broadcast to `result_type` (itself where that is a scalar too), at the
    current insertion point."""
    if not ir.RankedTensorType(result_type).rank:
        return scalar
    return ir.Operation.create(
        "stablehlo.broadcast_in_dim", results=[result_type], operands=[scalar],
        attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])}).results[0]


# XLA's simplifier rewrites float arithmetic with constants before its fusion, and
# never inside a fusion: fused, our ops would keep the rounding that JAX's jit loses.
CONSTANT_ARITHMETIC = {"stablehlo.add": float.__add__, "stablehlo.subtract": float.__sub__,
                       "stablehlo.multiply": float.__mul__}


def _simplify_constant_arithmetic(op, _is_constant=None) -> ir.Value | None:
    """As XLA's simplifier does, for floats: x * 1 -> x, x + 0 -> x, x - 0 -> x;
    and where XLA rounds in the element type (not bf16), fold c1 op c2 of scalar
    constants, x - c -> x + (-c), (x + c1) + c2 -> x + (c1 + c2) and
    (x * c1) * c2 -> x * (c1 * c2), the constants combined in the element type.
    These round differently from the ops as written (float16 gumbel's
    (u - 1) * (1 - tiny) + tiny is u + (tiny - 1) = u - 1 under JAX's jit). Operand
    order matters where XLA's patterns say so: a broadcast constant on the right
    only, a scalar one on either side (XLA moves it right). XLA CPU computes bf16
    arithmetic as f32 ops between converts, which its patterns do not see through:
    only the identities hold there."""
    operation = op.operation
    result = operation.results[0]
    element = ir.RankedTensorType(result.type).element_type
    if not isinstance(element, ir.FloatType) or not opinfo.static_tensor(result.type):
        return None
    name, (lhs, rhs) = operation.name, operation.operands
    left, right = _constant_number(lhs), _constant_number(rhs)
    identity = {"stablehlo.multiply": 1.0, "stablehlo.add": 0.0, "stablehlo.subtract": 0.0}[name]
    if right and right[0] == identity:
        replacement = lhs
    elif left and left[0] == identity and name != "stablehlo.subtract":
        replacement = rhs
    elif isinstance(element, ir.BF16Type):
        return None
    elif left and right and left[1] == right[1] == "scalar":
        replacement = _folded(element, CONSTANT_ARITHMETIC[name](left[0], right[0]),
                              result.type, op)
    elif name == "stablehlo.subtract" and right and not left:
        with op.location, ir.InsertionPoint(op):
            added = ir.Operation.create(
                "stablehlo.add", results=[result.type],
                operands=[lhs, _splat_value(element, -right[0], result.type)])
        replacement = _reassociate(added) or added.results[0]
    elif name != "stablehlo.subtract":
        replacement = _reassociate(op)
    else:
        return None
    return replacement


def _reassociate(op) -> ir.Value | None:
    """(x + c1) + c2 -> x + (c1 + c2), and the same for multiply, or None."""
    operation = op.operation
    inner, outer_constant = _split_constant(operation.operands)
    if inner is None or isinstance(inner.owner, ir.Block) or inner.owner.name != operation.name:
        return None
    x, inner_constant = _split_constant(inner.owner.operands)
    if x is None or inner_constant[1] != outer_constant[1] or _constant_number(x):
        return None
    element = ir.RankedTensorType(operation.results[0].type).element_type
    combined = _folded(element, CONSTANT_ARITHMETIC[operation.name](
        inner_constant[0], outer_constant[0]), operation.results[0].type, op)
    if combined is None:
        return None
    with op.location, ir.InsertionPoint(op):
        return ir.Operation.create(operation.name, results=[operation.results[0].type],
                                   operands=[x, combined]).results[0]


def _split_constant(operands):
    """(the other operand, (number, kind)) of a binary op with one constant operand
    where XLA's patterns look for it, else (None, None)."""
    lhs, rhs = operands
    right = _constant_number(rhs)
    if right and not _constant_number(lhs):
        return lhs, right
    left = _constant_number(lhs)
    if left and left[1] == "scalar" and not right:
        return rhs, left
    return None, None


def _constant_number(value) -> tuple[float, str] | None:
    """(its one number, "scalar" or "broadcast") for a float splat constant, or a
    broadcast_in_dim of one; None otherwise, and for NaN (whose folded payload XLA
    does not promise). "scalar": a constant of at most one element, which XLA's
    patterns match as a constant; larger splats XLA first turns into broadcasts."""
    op, kind = value.owner, "scalar"
    while not isinstance(op, ir.Block) and op.name == "stablehlo.broadcast_in_dim":
        op, kind = op.operands[0].owner, "broadcast"
    converted = not isinstance(op, ir.Block) and op.name == "stablehlo.convert"
    if converted:  # of a small integer (lax.pow(x, 3)): XLA folds it to a float first
        op = op.operands[0].owner
        while not isinstance(op, ir.Block) and op.name == "stablehlo.broadcast_in_dim":
            op, kind = op.operands[0].owner, "broadcast"
    if isinstance(op, ir.Block) or op.name != "stablehlo.constant":
        return None
    attr = ir.DenseElementsAttr(op.attributes["value"])
    splat = attr.get_splat_value() if attr.is_splat else None
    if (converted and isinstance(splat, ir.IntegerAttr) and splat.type.width > 1
            and abs(splat.value) <= _EXACT_INTEGERS):
        number = float(splat.value)
    elif not converted and isinstance(splat, ir.FloatAttr):
        number = ir.FloatAttr(splat).value
    else:
        return None
    if number != number:
        return None
    if opinfo.num_elements(op.results[0].type) > 1:
        kind = "broadcast"
    return number, kind


_EXACT_INTEGERS = 2048  # integers every float type holds exactly (f16 from 2049 rounds)


def _folded(element: ir.Type, number: float, result_type: ir.Type, anchor) -> ir.Value | None:
    """`number`, computed in double, as a constant of `element` before `anchor`:
    rounding a double sum or product of two narrower floats once more gives the
    correctly rounded result in that format, as XLA's folder computes it. None for
    NaN."""
    if number != number:
        return None
    with anchor.location, ir.InsertionPoint(anchor):
        return _splat_value(element, number, result_type)


def _folded_constant(value) -> bool:
    """A constant, or a convert of one: XLA folds either before it simplifies."""
    op = value.owner
    if not isinstance(op, ir.Block) and op.name == "stablehlo.convert":
        op = op.operands[0].owner
    return not isinstance(op, ir.Block) and op.name == "stablehlo.constant"


# XLA's simplifier rewrites these float patterns before its fusion, never inside one,
# so fused as written they round differently from JAX's jit (measured on 100k random
# f16, f32 and f64 values each, about a third to half of the results differ). bf16
# it computes as f32 ops between converts, which its patterns do not see through.
_SIMPLIFIED_TYPES = ("f16", "f32", "f64")


def _create(name: str, operands, result_type: ir.Type) -> ir.Value:
    """One stablehlo op at the current insertion point."""
    return ir.Operation.create(f"stablehlo.{name}", operands=list(operands),
                               results=[result_type]).results[0]


def _producer(value, name: str):
    """The op named stablehlo.`name` that computes `value`, or None."""
    op = value.owner
    return None if isinstance(op, ir.Block) or op.name != f"stablehlo.{name}" else op


def _one_use(value) -> bool:
    return len(list(value.uses)) == 1


def _simplified(op, is_constant) -> bool:
    """Whether XLA's float rules apply to `op`: a float type they see, a static shape,
    and a result XLA does not fold to a constant (it computes that in its evaluator)."""
    result = op.operation.results[0]
    return (opinfo.static_tensor(result.type)
            and opinfo.element_type(result.type) in _SIMPLIFIED_TYPES
            and not is_constant(result))


def _non_negative(value) -> bool:
    """XLA's IsNonNegative, for floats: exp, abs, x * x, a non-negative scalar constant,
    a broadcast, min, max, select or power of non-negative values. (Its IsPositive
    holds only for a cuDNN batch norm's output.)"""
    op = value.owner
    if isinstance(op, ir.Block):
        return False
    name, operands = op.name, list(op.operands)
    if name in ("stablehlo.exponential", "stablehlo.abs", "stablehlo.iota"):
        return True
    if name == "stablehlo.multiply":
        return operands[0] == operands[1]
    if name == "stablehlo.constant":
        number = _constant_number(value)
        return (opinfo.num_elements(value.type) == 1 and number is not None
                and math.copysign(1.0, number[0]) > 0)
    if name in ("stablehlo.broadcast_in_dim", "stablehlo.power"):
        return _non_negative(operands[0])
    if name == "stablehlo.minimum":
        return _non_negative(operands[0]) and _non_negative(operands[1])
    if name == "stablehlo.maximum":
        return _non_negative(operands[0]) or _non_negative(operands[1])
    if name == "stablehlo.select":
        return _non_negative(operands[1]) and _non_negative(operands[2])
    return False


def _divide_by_one(divide, _is_constant=None) -> ir.Value | None:
    """x / 1 -> x, XLA's first divide rule, exact for every float. Before the
    reciprocal rule: x * (1 / 1) leaves x alone only once XLA has folded the 1 / 1,
    which our rules do not, so an unfused copy of x and a fused one would meet in a
    subtract that LLVM contracts into an FMA (var over a unit axis came out 1.7e-13,
    not 0: fuzzer, jit seed 10539)."""
    x, divisor = divide.operation.operands
    if not isinstance(ir.RankedTensorType(x.type).element_type, ir.FloatType):
        return None  # _constant_number reads float constants only
    number = _constant_number(divisor)
    return x if number and number[0] == 1.0 else None


def _divide_by_exp(divide, is_constant) -> ir.Value | None:
    """exp(a) / exp(b) -> exp(a - b), and a / exp(b) -> a * exp(-b): XLA's first float
    divide rules, whatever else reads the exp (1 / exp2(x), then pow(exp(-x), y) ->
    exp(-x * y) under JAX's jit; fuzz --bitwise, jit seed 5012)."""
    a, divisor = divide.operation.operands
    exp = _producer(divisor, "exponential")
    if exp is None or not _simplified(divide, is_constant):
        return None
    b, t = exp.operands[0], divide.result.type
    numerator = _producer(a, "exponential")
    with divide.location, ir.InsertionPoint(divide):
        if numerator is not None:
            return _create("exponential", [_create("subtract", [numerator.operands[0], b], t)], t)
        return _create("multiply", [a, _create("exponential", [_create("negate", [b], t)], t)], t)


def _divide_by_power(divide, is_constant) -> ir.Value | None:
    """a / pow(b, c) -> a * pow(b, -c)."""
    a, divisor = divide.operation.operands
    power = _producer(divisor, "power")
    if power is None or not _simplified(divide, is_constant):
        return None
    b, c = power.operands
    with divide.location, ir.InsertionPoint(divide):
        inverse = _create("power", [b, _create("negate", [c], c.type)], b.type)
        return _create("multiply", [a, inverse], divide.result.type)


def _divide_by_root(divide, is_constant) -> ir.Value | None:
    """a / sqrt(b) -> a * rsqrt(b) and a / rsqrt(b) -> a * sqrt(b), where the root has
    no other use (gamma's (1 / 3) / sqrt(d): chisquare, t, f samples). A constant b
    XLA folds: the reciprocal rule sees it."""
    a, divisor = divide.operation.operands
    for name, inverse in (("sqrt", "rsqrt"), ("rsqrt", "sqrt")):
        root = _producer(divisor, name)
        if (root is not None and _one_use(divisor) and not is_constant(divisor)
                and _simplified(divide, is_constant)):
            with divide.location, ir.InsertionPoint(divide):
                flipped = _create(inverse, [root.operands[0]], divide.result.type)
                return _create("multiply", [a, flipped], divide.result.type)
    return None


def _reassociate_divides(divide, is_constant) -> ir.Value | None:
    """(a / b) / (c / d) -> (a * d) / (b * c), (a / b) / c -> a / (b * c) and
    a / (b / c) -> (a * c) / b, in that order, after the reciprocal rule."""
    if not _simplified(divide, is_constant):
        return None
    x, y = divide.operation.operands
    inner_x, inner_y = _producer(x, "divide"), _producer(y, "divide")
    t = divide.result.type
    with divide.location, ir.InsertionPoint(divide):
        if inner_x is not None and inner_y is not None:
            (a, b), (c, d) = inner_x.operands, inner_y.operands
            return _create("divide", [_create("multiply", [a, d], t),
                                      _create("multiply", [b, c], t)], t)
        if inner_x is not None:
            a, b = inner_x.operands
            return _create("divide", [a, _create("multiply", [b, y], t)], t)
        if inner_y is not None:
            b, c = inner_y.operands
            return _create("divide", [_create("multiply", [x, c], t), b], t)
    return None


def _multiply_exps(multiply, is_constant) -> ir.Value | None:
    """exp(a) * exp(b) -> exp(a + b), whatever else reads either exp (XLA's fast-math
    HandleMultiply): as written, exp(90) * exp(-80) overflowed to inf where JAX's jit
    gives exp(10), and 59% of 4096 f32 products of random normals rounded otherwise.
    Not where an exp is of a constant: XLA has folded it by then."""
    lhs, rhs = multiply.operation.operands
    left, right = _producer(lhs, "exponential"), _producer(rhs, "exponential")
    if (left is None or right is None or not _simplified(multiply, is_constant)
            or is_constant(lhs) or is_constant(rhs)):
        return None
    t = multiply.result.type
    with multiply.location, ir.InsertionPoint(multiply):
        exponent = _create("add", [left.operands[0], right.operands[0]], t)
        return _create("exponential", [exponent], t)


def _multiply_roots(multiply, is_constant) -> ir.Value | None:
    """sqrt(x) * sqrt(x) -> x and rsqrt(x) * rsqrt(x) -> 1 / x for an x XLA knows
    non-negative (_non_negative)."""
    lhs, rhs = multiply.operation.operands
    if not _simplified(multiply, is_constant):
        return None
    for name in ("sqrt", "rsqrt"):
        left, right = _producer(lhs, name), _producer(rhs, name)
        if left is None or right is None or left.operands[0] != right.operands[0]:
            continue
        x = left.operands[0]
        if not _non_negative(x):
            return None
        if name == "sqrt":
            return x
        element = ir.RankedTensorType(x.type).element_type
        with multiply.location, ir.InsertionPoint(multiply):
            return _create("divide", [_splat_value(element, 1.0, x.type), x], x.type)
    return None


def _scale_broadcast_factor(multiply, is_constant) -> ir.Value | None:
    """(a * c) * broadcast(b) -> a * broadcast(b * c) for a scalar constant c and a
    b that is not one, either operand order (x * 0.5 * scale)."""
    if not _simplified(multiply, is_constant):
        return None
    lhs, rhs = multiply.operation.operands
    for inner, other in ((lhs, rhs), (rhs, lhs)):
        product = _producer(inner, "multiply")
        if product is None:
            continue
        for a, c in (tuple(product.operands), tuple(product.operands)[::-1]):
            number = _constant_number(c)
            if number is None or _constant_number(a) or _folded_constant(a):
                continue
            spread = _producer(other, "broadcast_in_dim")
            if spread is None or _constant_number(other) or _folded_constant(spread.operands[0]):
                return None  # XLA's match took this product; the other side fails it
            b = spread.operands[0]
            element = ir.RankedTensorType(b.type).element_type
            with multiply.location, ir.InsertionPoint(multiply):
                scaled = _create("multiply", [b, _splat_value(element, number[0], b.type)],
                                 b.type)
                spread_back = spread.clone(ip=ir.InsertionPoint(multiply))
                spread_back.operands[0] = scaled
                return _create("multiply", [a, spread_back.results[0]],
                               multiply.result.type)
    return None


def _fold_constant_minus(add, is_constant) -> ir.Value | None:
    """(c1 - a) + c2 -> (c1 + c2) - a, the constants of one kind (_split_constant)."""
    if not _simplified(add, is_constant):
        return None
    difference, outer = _split_constant(add.operation.operands)
    subtract = None if difference is None else _producer(difference, "subtract")
    if subtract is None:
        return None
    c1, a = subtract.operands
    inner = _constant_number(c1)
    if inner is None or inner[1] != outer[1] or _constant_number(a):
        return None
    element = ir.RankedTensorType(add.result.type).element_type
    combined = _folded(element, inner[0] + outer[0], add.result.type, add)
    if combined is None:
        return None
    with add.location, ir.InsertionPoint(add):
        return _create("subtract", [combined, a], add.result.type)


def _log_of_exp(log, is_constant) -> ir.Value | None:
    """log(exp(a)) -> a, whatever else reads the exp (XLA's fast-math HandleLog, its
    first rule): fused as written, the exp of an f32 a above 88.7 overflowed, and the
    log gave inf where JAX's jit gives a (fuzz --bitwise, jit seed 5611)."""
    exp = _producer(log.operation.operands[0], "exponential")
    if exp is None or not _simplified(log, is_constant):
        return None
    return exp.operands[0]


def _sqrt_of_square(sqrt, is_constant) -> ir.Value | None:
    """sqrt(a * a) -> |a| (XLA's fast-math HandleSqrt): as written, a square that
    overflows (|a| above 1.8e19 in f32) or underflows gave inf or 0 where JAX's jit
    gives |a|."""
    square = _producer(sqrt.operation.operands[0], "multiply")
    if (square is None or square.operands[0] != square.operands[1]
            or not _simplified(sqrt, is_constant)):
        return None
    with sqrt.location, ir.InsertionPoint(sqrt):
        return _create("abs", [square.operands[0]], sqrt.result.type)


def _rsqrt_of_power_or_reciprocal(rsqrt, is_constant) -> ir.Value | None:
    """rsqrt(pow(a, -2)) -> a and rsqrt(1 / a) -> sqrt(a) for an a XLA knows is not
    negative (XLA's HandleRsqrt; _non_negative): as written, 5% and 18% of f32 results
    for random |x| rounded otherwise than under JAX's jit."""
    x = rsqrt.operation.operands[0]
    power, divide = _producer(x, "power"), _producer(x, "divide")
    if (power is None and divide is None) or not _simplified(rsqrt, is_constant):
        return None
    if power is not None:
        a, exponent = power.operands
        number = _constant_number(exponent)
        return a if number is not None and number[0] == -2 and _non_negative(a) else None
    one, a = divide.operands
    number = _constant_number(one)
    if number is None or number[0] != 1 or not _non_negative(a):
        return None
    with rsqrt.location, ir.InsertionPoint(rsqrt):
        return _create("sqrt", [a], rsqrt.result.type)


def _compare_non_negative_with_zero(compare, is_constant) -> ir.Value | None:
    """x < 0 and 0 > x -> false, x >= 0 and 0 <= x -> true, for a float x XLA knows is
    not negative (XLA's HandleCompare; _non_negative), NaN or not: exp(nan) >= 0 is
    true under JAX's jit, false as written."""
    result = compare.operation.results[0]
    lhs, rhs = compare.operation.operands
    if (opinfo.element_type(lhs.type) not in _SIMPLIFIED_TYPES
            or not opinfo.static_tensor(result.type) or is_constant(result)):
        return None
    direction = str(compare.attributes["comparison_direction"]).rstrip(">").split()[-1]
    if direction in ("LT", "GE") and _is_zero(rhs) and _non_negative(lhs):
        value = direction == "GE"
    elif direction in ("GT", "LE") and _is_zero(lhs) and _non_negative(rhs):
        value = direction == "LE"
    else:
        return None
    with compare.location, ir.InsertionPoint(compare):
        return _splat_value(ir.IntegerType.get_signless(1), value, result.type)


def _abs_of_non_negative(abs_op, is_constant) -> ir.Value | None:
    """abs(x) -> x for a float x XLA knows is not negative (XLA's HandleAbs;
    _non_negative): the same numbers, but a NaN keeps its sign bit, as under JAX's jit
    (abs(exp(-nan)) is -nan there)."""
    x = abs_op.operation.operands[0]
    return x if _simplified(abs_op, is_constant) and _non_negative(x) else None


def _is_zero(value) -> bool:
    """A float constant 0 (or -0), or a broadcast of one (XLA's IsAll(x, 0))."""
    number = _constant_number(value)
    return number is not None and number[0] == 0


def _log_of_power_or_root(log, is_constant) -> ir.Value | None:
    """log(pow(a, b)) -> select(b == 0, 0, log(abs(a)) * b), log(sqrt(a)) ->
    log(a) * 0.5 and log(rsqrt(a)) -> log(a) * -0.5."""
    if not _simplified(log, is_constant):
        return None
    x = log.operation.operands[0]
    t = log.result.type
    element = ir.RankedTensorType(t).element_type
    power = _producer(x, "power")
    with log.location, ir.InsertionPoint(log):
        if power is not None:
            a, b = power.operands
            scaled = _create("multiply", [_create("log", [_create("abs", [a], t)], t), b], t)
            bools = ir.RankedTensorType.get(ir.RankedTensorType(t).shape,
                                            ir.IntegerType.get_signless(1))
            zero = ir.Operation.create(
                "stablehlo.compare", results=[bools],
                operands=[b, _splat_value(element, 0.0, b.type)],
                attributes={"comparison_direction":
                            stablehlo.ComparisonDirectionAttr.get("EQ")}).results[0]
            return _create("select", [zero, _splat_value(element, 0.0, t), scaled], t)
        for name, factor in (("sqrt", 0.5), ("rsqrt", -0.5)):
            root = _producer(x, name)
            if root is not None:
                return _create("multiply", [_create("log", [root.operands[0]], t),
                                            _splat_value(element, factor, t)], t)
    return None


def _expand_power(power, is_constant) -> ir.Value | None:
    """pow(a, n) for a constant n: 1 (n = 0), a, a * a, a * (a * a), 1 / a (n = -1),
    and sqrt(a) for n = 0.5 and a non-negative a. Only a * (a * a) rounds differently
    from the power XLA CPU computes; the others change what the rules above see
    (log(pow(a, 2)) is log(a * a) under JAX's jit). Between n = 1 and n = 2, as in
    XLA's HandlePower, pow(exp(x), b) -> exp(x * b) for any b: fused, the power
    rounded differently (exp2(x) ** x; fuzz --bitwise, jit seed 5012)."""
    if not _simplified(power, is_constant):
        return None
    a, exponent = power.operation.operands
    number = _constant_number(exponent)
    n, t = (None if number is None else number[0]), power.result.type
    element = ir.RankedTensorType(t).element_type
    with power.location, ir.InsertionPoint(power):
        if n == 0:
            return _splat_value(element, 1.0, t)
        if n == 1:
            return a
        exp = _producer(a, "exponential")
        if exp is not None:
            return _create("exponential", [_create("multiply", [exp.operands[0], exponent], t)], t)
        if n == 2:
            return _create("multiply", [a, a], t)
        if n == 3:
            return _create("multiply", [a, _create("multiply", [a, a], t)], t)
        if n == -1:
            return _create("divide", [_splat_value(element, 1.0, t), a], t)
        if n == 0.5 and _non_negative(a):
            return _create("sqrt", [a], t)
    return None


def _elide_unit_reshape(broadcast, _is_constant=None) -> ir.Value | None:
    """broadcast_in_dim(reshape(x)) -> broadcast_in_dim(x) where the reshape only
    inserts unit dims, as XLA does before it visits the broadcast's users: ball's
    g / (s ** (1 / p))[..., None] is then g / broadcast(pow(s, 1 / p)), which XLA's
    divide rules make g * broadcast(pow(s, -(1 / p)))."""
    reshape = _producer(broadcast.operation.operands[0], "reshape")
    if reshape is None or not opinfo.static_tensor(reshape.result.type):
        return None
    source, middle = reshape.operands[0].type.shape, reshape.result.type.shape
    inserted, k = [], 0
    for j, size in enumerate(middle):
        if k < len(source) and source[k] == size:
            k += 1
        elif size == 1:
            inserted.append(j)
        else:
            return None
    if k != len(source):
        return None
    dims = [d for j, d in enumerate(opinfo.int_array(broadcast.attributes["broadcast_dimensions"]))
            if j not in inserted]
    with broadcast.location, ir.InsertionPoint(broadcast):
        return ir.Operation.create(
            "stablehlo.broadcast_in_dim", operands=[reshape.operands[0]],
            results=[broadcast.result.type],
            attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get(dims)}).results[0]


def _undo_unit_reshapes(broadcast, _is_constant=None) -> ir.Value | None:
    """broadcast_in_dim(reshape(x)) -> x where the two only take unit dims away and
    put them back (x[:, 0][:, None]): XLA makes a broadcast that keeps the element
    count a reshape, folds the reshapes and drops the one left at x's shape. Kept,
    a fused reader would see x twice, once recomputed in its fusion and once read
    back, and LLVM may contract the recomputed multiply into an FMA with the
    subtract of the two (fuzzer, jit seed 10539: var over a unit axis, 1.7e-13)."""
    result = broadcast.operation.results[0]
    source = _unit_source(result)
    while source is not None and source.type != result.type:
        source = _unit_source(source)
    return source


def _sink_broadcasts(op, is_constant) -> ir.Value | None:
    """op(broadcast(x), broadcast(y), ...) -> broadcast(op(x, y, ...)) for an elementwise
    op whose operands are all broadcasts, of scalars or of values of one type with the
    same dimensions (XLA's TryToSinkBroadcastAfterElementwiseOps, which runs when its
    simplifier visits the broadcast, before the op's own rules): the op then computes
    on the small shape. Not sunk, x / x of a broadcast x became x * (1 / x), whose
    rounding made log of it -6e-8 where JAX's jit gives 0 (fuzz jit seed 7091). A
    broadcast of as many elements as its operand XLA makes a reshape or transpose
    first, and an op XLA folds to a constant is left to it."""
    spreads = []
    for v in op.operation.operands:  # most ops read some operand that is no broadcast
        spread = _producer(v, "broadcast_in_dim")
        if spread is None:
            return None
        spreads.append(spread)
    if not spreads:
        return None
    sources = [spread.operands[0] for spread in spreads]
    big = [k for k, x in enumerate(sources) if x.type.rank]
    reference = spreads[big[0] if big else 0]
    source_type = reference.operands[0].type
    result_type = op.operation.results[0].type
    if (not result_type.rank or not opinfo.static_tensor(result_type)
            or opinfo.num_elements(result_type) == opinfo.num_elements(source_type)
            or is_constant(op.operation.results[0])):
        return None
    dims = reference.attributes["broadcast_dimensions"]
    if any(sources[k].type != source_type or spreads[k].attributes["broadcast_dimensions"] != dims
           for k in big):
        return None
    attributes = op.operation.attributes
    with op.location, ir.InsertionPoint(op):
        small = ir.RankedTensorType.get(source_type.shape, result_type.element_type)
        operands = [x if x.type.rank else _spread(x, ir.RankedTensorType.get(
            source_type.shape, x.type.element_type)) for x in sources]
        sunk = ir.Operation.create(op.operation.name, operands=operands, results=[small],
                                   attributes={attributes[i].name: attributes[i].attr
                                               for i in range(len(attributes))})
        return ir.Operation.create("stablehlo.broadcast_in_dim", operands=[sunk.results[0]],
                                   results=[result_type],
                                   attributes={"broadcast_dimensions": dims}).results[0]


# reducers XLA's ReductionComputationsEquivalent matches by their root alone
_ASSOCIATIVE_REDUCERS = frozenset({"stablehlo.add", "stablehlo.multiply", "stablehlo.and",
                                   "stablehlo.or"})


def _same_init(a, b) -> bool:
    """XLA's Identical for two reduces' init values: one value, or equal constants."""
    if a == b:
        return True
    x, y = _producer(a, "constant"), _producer(b, "constant")
    return x is not None and y is not None and x.attributes["value"] == y.attributes["value"]


def _new_reduce(operand, init, dims: list[int], result_type, reducer, anchor) -> ir.Value:
    """A reduce of `operand` over `dims` with `reducer`'s body, before `anchor`."""
    with anchor.location:
        with ir.InsertionPoint(anchor):
            reduce = ir.Operation.create(
                "stablehlo.reduce", results=[result_type], operands=[operand, init],
                regions=1, attributes={"dimensions": ir.DenseI64ArrayAttr.get(sorted(dims))})
        copy_reducer(reducer.operation, reduce)
    return reduce.results[0]


def _reduce_of_reduce(reduce, is_constant) -> ir.Value | None:
    """reduce(reduce(x, A), B) -> reduce(x, A + B) for the same add, multiply, and or
    or reducer and init (XLA's HandleReduce, MergeReduces): a sum of sums is one sum
    there, which adds in another order (5 of 8 f32 sums of 16 differed)."""
    operation = reduce.operation
    inner = _producer(operation.operands[0], "reduce")
    if inner is None:
        return None
    kind = opinfo.reducer(reduce)
    if (kind not in _ASSOCIATIVE_REDUCERS or opinfo.reducer(inner) != kind
            or not _same_init(operation.operands[1], inner.operation.operands[1])
            or not opinfo.plain_reducer(reduce)):
        return None
    inner_dims = sorted(opinfo.int_array(inner.attributes["dimensions"]))
    outer_dims = sorted(opinfo.int_array(operation.attributes["dimensions"]))
    for inner_dim in inner_dims:  # outer dims, numbered as x's
        outer_dims = [d + 1 if d >= inner_dim else d for d in outer_dims]
    return _new_reduce(inner.operation.operands[0], operation.operands[1],
                       inner_dims + outer_dims, operation.results[0].type, reduce, reduce)


def _reduce_of_reshape(reduce, is_constant) -> ir.Value | None:
    """XLA's HandleReduce of a reshape: where the dims the reduce keeps pass the
    reshape unmodified, it reduces the reshape's operand instead (a sum over a 16
    split 4 x 4 is one sum over the 16: 5 of 8 sums differed as written); where only
    the dims it keeps are reshaped, and the reduce is the reshape's one reader, it
    reduces first and reshapes after. Shapes with dims of size 0 or 1 are left: XLA
    pairs those with other dims its own way (CommonFactors)."""
    operation = reduce.operation
    reshape = _producer(operation.operands[0], "reshape")
    if reshape is None or len(operation.results) != 1 or not opinfo.plain_reducer(reduce):
        return None
    x = reshape.operands[0]
    before, after = list(x.type.shape), list(reshape.result.type.shape)
    if any(d <= 1 for d in before + after):
        return None
    # dims the reshape leaves as they are: XLA's DimensionsUnmodifiedByReshape
    ends = [(i, j) for i in range(len(before) + 1) for j in range(len(after) + 1)
            if math.prod(before[:i]) == math.prod(after[:j])]
    unmodified = {j: i for (i, j), (i2, j2) in zip(ends, ends[1:]) if i2 - i == j2 - j == 1}
    dims = opinfo.int_array(operation.attributes["dimensions"])
    kept = [d for d in range(len(after)) if d not in dims]
    if all(d in unmodified for d in kept):
        kept_before = {unmodified[d] for d in kept}
        return _new_reduce(x, operation.operands[1],
                           [i for i in range(len(before)) if i not in kept_before],
                           operation.results[0].type, reduce, reduce)
    if not (all(d in unmodified for d in dims) and _one_use(reshape.result)):
        return None
    reduced_dims = [unmodified[d] for d in dims]
    with reduce.location:
        reduced_type = ir.RankedTensorType.get(
            [n for i, n in enumerate(before) if i not in reduced_dims],
            ir.RankedTensorType(x.type).element_type)
    reduced = _new_reduce(x, operation.operands[1], reduced_dims, reduced_type, reduce, reduce)
    with reduce.location, ir.InsertionPoint(reduce):
        return ir.Operation.create("stablehlo.reshape", results=[operation.results[0].type],
                                   operands=[reduced]).results[0]


def _countable(t) -> bool:
    """A float, complex or wider-than-bool integer element type: one a constant count
    is made in (IntegerAttr of another type crashed the process)."""
    element = ir.RankedTensorType(t).element_type
    return isinstance(element, (ir.FloatType, ir.ComplexType)) or (
        isinstance(element, ir.IntegerType) and element.width > 1)


def _reduce_of_broadcast(reduce, is_constant) -> ir.Value | None:
    """XLA's HandleReduce of a broadcast: over dims the broadcast's operand has, the
    reduce moves before the broadcast (any reducer); a sum over dims the broadcast
    added only is the operand times their size, plus the init (summed as written, a
    broadcast row added up 8 times rounded otherwise in 6 of 16 columns)."""
    operation = reduce.operation
    spread = _producer(operation.operands[0], "broadcast_in_dim")
    if (spread is None or len(operation.results) != 1 or not opinfo.plain_reducer(reduce)
            or not opinfo.static_tensor(spread.result.type)):
        return None
    x, init = spread.operands[0], operation.operands[1]
    spread_dims = opinfo.int_array(spread.attributes["broadcast_dimensions"])
    dims = opinfo.int_array(operation.attributes["dimensions"])
    kept = [i for i, d in enumerate(spread_dims) if d not in dims]
    # where x's kept dims land in the reduce's result
    landing = [spread_dims[i] - sum(d < spread_dims[i] for d in dims) for i in kept]
    result_type = operation.results[0].type
    t = x.type
    wide = spread.result.type.shape
    # x's own dims: those the broadcast keeps. One of size 1 that it widens is the
    # broadcast's own, as to XLA, whose import makes such a broadcast a reshape that
    # drops the dim and a broadcast that adds it (summing over it multiplies)
    own = [d for i, d in enumerate(spread_dims) if t.shape[i] == wide[d]]
    if all(d in own for d in dims):  # every reduced dim is one of x's
        with reduce.location:
            reduced_type = ir.RankedTensorType.get([t.shape[i] for i in kept], t.element_type)
        reduced = _new_reduce(x, init, [spread_dims.index(d) for d in dims], reduced_type,
                              reduce, reduce)
    elif (any(d in own for d in dims) or opinfo.reducer(reduce) != "stablehlo.add"
          or spread_dims != sorted(spread_dims) or not _countable(t)):
        return None
    else:  # every reduced dim comes from the broadcast
        count = math.prod(wide[d] for d in dims)
        element = ir.RankedTensorType(t).element_type
        with reduce.location, ir.InsertionPoint(reduce):
            if len(kept) < len(spread_dims):  # x without the widened dims summed over
                x = _create("reshape", [x], ir.RankedTensorType.get(
                    [t.shape[i] for i in kept], element))
                t = x.type
            factor = _splat_value(element, count if isinstance(element, ir.IntegerType)
                                  else float(count), t)
            reduced = _create("add", [_spread(init, t), _create("multiply", [x, factor], t)], t)
    if reduced.type == result_type:
        return reduced
    with reduce.location, ir.InsertionPoint(reduce):
        return ir.Operation.create("stablehlo.broadcast_in_dim", results=[result_type],
                                   operands=[reduced], attributes={
                                       "broadcast_dimensions": ir.DenseI64ArrayAttr.get(landing)}
                                   ).results[0]


def _constant_attribute(value) -> ir.DenseElementsAttr | None:
    """The elements of the constant `value` is, or broadcasts; None for anything else
    (a dense_resource blob too: left as it is)."""
    op = value.owner
    while not isinstance(op, ir.Block) and op.name == "stablehlo.broadcast_in_dim":
        op = op.operands[0].owner
    if isinstance(op, ir.Block) or op.name != "stablehlo.constant":
        return None
    try:
        return ir.DenseElementsAttr(op.attributes["value"])
    except (TypeError, ValueError):
        return None


def _known_splat(value):
    """The one value of a splat constant, or of a broadcast of one, as a Python bool
    (i1), int or float; None for anything else and for a float NaN (whose folded
    payload XLA does not promise)."""
    attr = _constant_attribute(value)
    if attr is None or not attr.is_splat:
        return None
    element = attr.type.element_type
    if isinstance(element, ir.IntegerType):
        number = ir.IntegerAttr(attr.get_splat_value()).value
        return number != 0 if element.width == 1 else number
    if isinstance(element, ir.FloatType):
        number = ir.FloatAttr(attr.get_splat_value()).value
        return None if number != number else number
    return None


_COMPARISONS = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
                "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b,
                "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b}
_LOGIC = {"stablehlo.and": lambda a, b: a and b, "stablehlo.or": lambda a, b: a or b,
          "stablehlo.xor": lambda a, b: a != b}


def _fold_exact_constant(op, _is_constant=None) -> ir.Value | None:
    """XLA folds an op of constants in its evaluator before its simplifier looks at the
    ops reading it; of those, the exact ones are folded here too (a float's abs or
    negate, a compare of numbers, the logic of bools), so that the rules below and the
    fusion passes see what XLA's simplifier will. hypot(x, 0.0) asks whether the
    constant |0.0| is infinite: or(compare(|x|, inf), that) is the compare of numbers
    to XLA, which a select fuses with what it picks; kept, the or made every such
    select of a second derivative read its operands from outside (capability's
    select_problem), 27 kernels where jax.jit makes 7."""
    operation = op.operation
    result = operation.results[0]
    if not opinfo.static_tensor(result.type):
        return None
    values = [_known_splat(v) for v in operation.operands]
    if not values or None in values:
        return None
    name, element = operation.name, ir.RankedTensorType(result.type).element_type
    if name in ("stablehlo.abs", "stablehlo.negate") and isinstance(element, ir.FloatType):
        value = abs(values[0]) if name == "stablehlo.abs" else -values[0]
    elif name == "stablehlo.compare":
        kind = (str(operation.attributes["compare_type"]).rstrip(">").split()[-1]
                if "compare_type" in operation.attributes else None)
        signed_or_float = kind in ("FLOAT", "SIGNED") or kind is None and not isinstance(
            ir.RankedTensorType(operation.operands[0].type).element_type, ir.IntegerType)
        # an unsigned number reads back signed: only the ones below the sign bit are sure
        if not (signed_or_float or kind == "UNSIGNED" and min(values) >= 0):
            return None
        direction = str(operation.attributes["comparison_direction"]).rstrip(">").split()[-1]
        value = _COMPARISONS[direction](*values)
    elif name in _LOGIC and _is_bool(element):
        value = _LOGIC[name](*values)
    elif name == "stablehlo.not" and _is_bool(element):
        value = not values[0]
    else:
        return None
    with op.location, ir.InsertionPoint(op):
        return _splat_value(element, value, result.type)


def _logic_with_constant(op, _is_constant=None) -> ir.Value | None:
    """XLA's simplifier for bools: x or false -> x, x or true -> true, x and true -> x,
    x and false -> false (HandleOr, HandleAnd)."""
    operation = op.operation
    if not _is_bool(ir.RankedTensorType(operation.results[0].type).element_type):
        return None
    lhs, rhs = operation.operands
    for x, c in ((lhs, rhs), (rhs, lhs)):
        known = _known_splat(c)
        if known is not None and c.type == operation.results[0].type:
            keeps_x = known if operation.name == "stablehlo.and" else not known
            return x if keeps_x else c
    return None


def _is_bool(element: ir.Type) -> bool:
    return isinstance(element, ir.IntegerType) and element.width == 1


def _select_of_constant_predicate(select, _is_constant=None) -> ir.Value | None:
    """select(true, a, b) -> a and select(false, a, b) -> b, the predicate a constant
    or a broadcast of one (XLA's HandleSelect, IsAll)."""
    predicate, on_true, on_false = select.operation.operands
    known = _known_splat(predicate)
    if known is None:
        return None
    return on_true if known else on_false


# per op, XLA's rules in the order its simplifier tries them; every elementwise op
# first has its broadcast operands sunk (_sink_broadcasts), as XLA visits them first
ARITHMETIC_RULES = {
    "stablehlo.divide": (_divide_by_one, _divide_by_exp, _divide_by_power, _divide_by_root,
                         _multiply_by_reciprocal, _reassociate_divides),
    "stablehlo.multiply": (_simplify_constant_arithmetic, _scale_broadcast_factor,
                           _multiply_exps, _multiply_roots),
    "stablehlo.add": (_simplify_constant_arithmetic, _fold_constant_minus),
    "stablehlo.subtract": (_simplify_constant_arithmetic,),
    "stablehlo.log": (_log_of_exp, _log_of_power_or_root),
    "stablehlo.sqrt": (_sqrt_of_square,),
    "stablehlo.rsqrt": (_rsqrt_of_power_or_reciprocal,),
    "stablehlo.compare": (_fold_exact_constant, _compare_non_negative_with_zero),
    "stablehlo.abs": (_fold_exact_constant, _abs_of_non_negative),
    "stablehlo.negate": (_fold_exact_constant,),
    "stablehlo.not": (_fold_exact_constant,),
    "stablehlo.xor": (_fold_exact_constant,),
    "stablehlo.and": (_fold_exact_constant, _logic_with_constant),
    "stablehlo.or": (_fold_exact_constant, _logic_with_constant),
    "stablehlo.select": (_select_of_constant_predicate,),
    "stablehlo.reduce": (_reduce_of_reduce, _reduce_of_reshape, _reduce_of_broadcast),
    "stablehlo.power": (_expand_power,),
    "stablehlo.broadcast_in_dim": (_elide_unit_reshape, _undo_unit_reshapes),
}
ARITHMETIC_RULES.update({name: (_sink_broadcasts, *ARITHMETIC_RULES.get(name, ()))
                         for name in ELEMENTWISE})


def _bool_multiply_to_select(multiply, is_constant) -> bool:
    """convert(p) * y -> select(p, y, 0) for a bool p and floats, as XLA's simplifier
    rewrites it outside fusions: where p is false the product is 0 even for an
    infinite or nan y (so a bool divided by a bool 0 is 0, not nan, under JAX's jit;
    found by the fuzzer). Fused, the multiply would stay and give nan. Not in bf16:
    XLA CPU computes it as an f32 multiply between converts, which the pattern does
    not see through, so inf * false stays nan under JAX's jit (fuzzer, jit seed 3001).
    Not for a convert of a broadcast bool: visiting the broadcast first, XLA sinks it
    past the convert (TryToSinkBroadcastAfterOpWithUniqueNonScalarOperand), so the
    multiply reads broadcast(convert(p)), and a broadcast false divided by 0 is nan
    under JAX's jit (fuzzer, jit seed 8048). Nor for a bool XLA folds to a constant
    (`is_constant`; x != x of integers, say), whose convert it folds too before it
    visits the multiply: log2(x != x) * (x != x) is -inf * 0, nan under JAX's jit
    (fuzzer, jit seed 9594). Nor for a product XLA makes from a divide after its
    simplifier has run (_LATE_PRODUCT)."""
    if _LATE_PRODUCT in multiply.operation.attributes:
        del multiply.operation.attributes[_LATE_PRODUCT]
        return False
    result_type = multiply.result.type
    element = ir.RankedTensorType(result_type).element_type
    if not isinstance(element, ir.FloatType) or str(element) == "bf16":
        return False
    for k, v in enumerate(multiply.operation.operands):
        convert = v.owner
        if (isinstance(convert, ir.Block) or convert.name != "stablehlo.convert"
                or opinfo.element_type(convert.operands[0].type) != "i1"
                or _producer(convert.operands[0], "broadcast_in_dim")
                or _producer(convert.operands[0], "broadcast")
                or is_constant(convert.operands[0])):
            continue
        with multiply.location, ir.InsertionPoint(multiply):
            select = ir.Operation.create(
                "stablehlo.select", results=[result_type],
                operands=[convert.operands[0], multiply.operation.operands[1 - k],
                          _splat_value(element, 0.0, result_type)])
        multiply.result.replace_all_uses_with(select.results[0])
        return True
    return False


def _outer_product_to_multiply(dot) -> bool:
    """A dot_general whose contracting dimensions all have size 1 (an outer product:
    vmap of a weight gradient) -> broadcast(lhs) * broadcast(rhs), as XLA's simplifier
    rewrites it after us. Left to XLA, with its fusion off, the two broadcasts and
    the multiply run as three kernels, each broadcast written to memory; rewritten
    here, instruction fusion makes them one. Only where each operand's batch
    dimensions lead, in order (the broadcasts then keep dimension order, as XLA
    needs), and every type is the same. In f16 and bf16 XLA multiplies in f32
    between converts, and so does the rewrite: an f16 multiply would round once
    where XLA rounds twice, and would read a converted bool that XLA's simplifier
    makes a select (false * inf was 0, nan under JAX's jit; fuzz jit seed 8294)."""
    dims = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    lhs, rhs = dot.operation.operands
    result = dot.operation.results[0]
    types = [ir.RankedTensorType(v.type) for v in (lhs, rhs, result)]
    if (len({str(t.element_type) for t in types}) != 1 or str(types[0].element_type) == "i1"
            or not all(t.has_static_shape for t in types)):
        return False
    sides = [(lhs, list(dims.lhs_batching_dimensions), list(dims.lhs_contracting_dimensions)),
             (rhs, list(dims.rhs_batching_dimensions), list(dims.rhs_contracting_dimensions))]
    n_batch = len(sides[0][1])
    spread, offset = [], n_batch
    for (value, batch, contracting), t in zip(sides, types):
        if any(t.shape[d] != 1 for d in contracting) or batch != list(range(n_batch)):
            return False
        kept = [d for d in range(t.rank) if d not in contracting]
        free = len(kept) - n_batch
        spread.append((value, [t.shape[d] for d in kept],
                       list(range(n_batch)) + list(range(offset, offset + free))))
        offset += free
    with dot.location, ir.InsertionPoint(dot):
        element = types[0].element_type
        if str(element) in ("f16", "bf16"):
            element = ir.F32Type.get()
        wide = ir.RankedTensorType.get(types[2].shape, element)
        factors = []
        for value, shape, to in spread:
            if element != types[0].element_type:
                value = _create("convert", [value], ir.RankedTensorType.get(
                    ir.RankedTensorType(value.type).shape, element))
            if list(shape) != list(ir.RankedTensorType(value.type).shape):
                value = _create("reshape", [value], ir.RankedTensorType.get(shape, element))
            factors.append(ir.Operation.create(
                "stablehlo.broadcast_in_dim", operands=[value], results=[wide],
                attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get(to)}).results[0])
        product = _create("multiply", factors, wide)
        if wide != result.type:
            product = _create("convert", [product], result.type)
    result.replace_all_uses_with(product)
    dot.operation.erase()
    return True


def _squeeze_unit_free_dims(dot) -> bool:
    """A dot_general whose operands have free dimensions of size 1 (`image[None] @ w`
    under vmap) -> the same dot_general without them, reshaped back. XLA would squeeze
    them itself, but lay the result out with the unit dimension major, then copy it
    to the layout our fusions read: a kernel per dot, which with its fusion off stays
    one. Reshaped here, the reshape back is a bitcast."""
    dims = stablehlo.DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    operands = list(dot.operation.operands)
    result = dot.operation.results[0]
    types = [ir.RankedTensorType(v.type) for v in (*operands, result)]
    if not all(t.has_static_shape for t in types):
        return False
    sides = [(list(dims.lhs_batching_dimensions), list(dims.lhs_contracting_dimensions)),
             (list(dims.rhs_batching_dimensions), list(dims.rhs_contracting_dimensions))]
    kept = [[d for d in range(t.rank) if d in batch or d in contracting or t.shape[d] != 1]
            for t, (batch, contracting) in zip(types, sides)]
    if all(len(k) == t.rank for k, t in zip(kept, types)):
        return False
    renumber = [{d: k for k, d in enumerate(side)} for side in kept]
    numbers = stablehlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=[renumber[0][d] for d in sides[0][0]],
        rhs_batching_dimensions=[renumber[1][d] for d in sides[1][0]],
        lhs_contracting_dimensions=[renumber[0][d] for d in sides[0][1]],
        rhs_contracting_dimensions=[renumber[1][d] for d in sides[1][1]])
    free = [[types[k].shape[d] for d in kept[k] if d not in sides[k][0] + sides[k][1]]
            for k in (0, 1)]
    squeezed_shape = [types[0].shape[d] for d in sides[0][0]] + free[0] + free[1]
    with dot.location, ir.InsertionPoint(dot):
        squeezed = []
        for value, t, k in zip(operands, types, kept):
            if len(k) != t.rank:
                value = ir.Operation.create(
                    "stablehlo.reshape", operands=[value], results=[ir.RankedTensorType.get(
                        [t.shape[d] for d in k], t.element_type)]).results[0]
            squeezed.append(value)
        attributes = {name: dot.operation.attributes[name] for name in dot.operation.attributes}
        attributes["dot_dimension_numbers"] = numbers
        new = ir.Operation.create(
            "stablehlo.dot_general", operands=squeezed, attributes=attributes,
            results=[ir.RankedTensorType.get(squeezed_shape, types[2].element_type)])
        back = ir.Operation.create("stablehlo.reshape", operands=[new.results[0]],
                                   results=[result.type])
    result.replace_all_uses_with(back.results[0])
    dot.operation.erase()
    return True

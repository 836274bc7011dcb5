"""What the passes know about each op: fusible or not, cheap or expensive, and
whether a consumer reads an operand element more than once.

Only ops named here are ever fused; every other op (CHLO, calls, control flow,
collectives, custom calls, ops of dialects we do not know) is left alone, so an
unfamiliar module is never miscompiled, only less fused.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir

# Elementwise ops XLA emits in a few instructions: safe to duplicate into every consumer.
CHEAP_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """
    abs add and bitcast_convert ceil clamp compare complex convert count_leading_zeros
    floor imag is_finite maximum minimum multiply negate not or popcnt real
    reduce_precision round_nearest_afz round_nearest_even select shift_left
    shift_right_arithmetic shift_right_logical sign subtract xor""".split())

# Elementwise ops costing a transcendental or a division per element: computing one
# twice costs real time, so they are never duplicated. (mhlo.erf: chlo-legalize keeps
# erf an op of its own, as XLA's import does.)
EXPENSIVE_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """
    atan2 cbrt cosine divide exponential exponential_minus_one log log_plus_one logistic
    power remainder rsqrt sine sqrt tan tanh""".split()) | {"mhlo.erf"}

# Elementwise arithmetic that XLA CPU computes in f32 when its operands are bf16
# (only data movement, select and convert stay bf16 there).
COMPUTED_IN_F32 = EXPENSIVE_ELEMENTWISE | frozenset(f"stablehlo.{n}" for n in """
    abs add ceil clamp compare floor maximum minimum multiply negate round_nearest_afz
    round_nearest_even sign subtract""".split())

# Data movement: cheap, fusible, read through an index map.
CHEAP_SHAPE = frozenset(f"stablehlo.{n}" for n in """
    broadcast broadcast_in_dim concatenate iota pad reshape reverse slice transpose""".split())

# Ops the passes understand; none has an effect, so an unread one is dead code.
KNOWN = (CHEAP_ELEMENTWISE | EXPENSIVE_ELEMENTWISE | CHEAP_SHAPE
         | {"stablehlo.reduce", "stablehlo.constant", "mhlo.fusion"})

# op(x, x) that XLA's simplifier folds to x (select(p, x, x) too) or to a
# constant; x * x it keeps
IDEMPOTENT = frozenset(f"stablehlo.{n}" for n in "and maximum minimum or select".split())
# op(x, x) that XLA's import folds to a constant for integers only (x - x, x == x,
# x ^ x): for floats and complex numbers a NaN or an infinity keeps it
# (measured, jaxlib 0.10.2: f16, bf16, f32 and complex x - x and x == x stay)
FOLDS_IDENTICAL_INTEGERS = frozenset({"stablehlo.compare", "stablehlo.subtract",
                                      "stablehlo.xor"})
FOLDS_IDENTICAL_OPERANDS = IDEMPOTENT | FOLDS_IDENTICAL_INTEGERS

# ops whose region blocks the passes fuse too, each block a dataflow graph of its own
CONTROL_FLOW = frozenset({"stablehlo.while", "stablehlo.case", "stablehlo.if"})

REDUCE = "stablehlo.reduce"
FUSION = "mhlo.fusion"
# the identity functions inline_calls passes constant arguments through
CONSTANT_ARGUMENT = "constant_argument_"

# Kept as their own kernels whatever the backend: library calls, control flow,
# effects, and ops whose emitters want their own loop nest.
NEVER_FUSED = frozenset(f"stablehlo.{n}" for n in """
    dot dot_general convolution sort custom_call while case if rng rng_bit_generator
    fft cholesky triangular_solve scatter gather dynamic_slice dynamic_update_slice
    reduce_window select_and_scatter all_reduce all_gather all_to_all reduce_scatter
    collective_permute collective_broadcast infeed outfeed send recv after_all
    optimization_barrier tuple get_tuple_element composite batch_norm_training
    batch_norm_inference batch_norm_grad map partition_id replica_id""".split()) | {
    "func.call", "func.return", "stablehlo.return"}


def region_problem(op) -> str | None:
    """Why `op` may not be fused in a while, case or if region XLA compiles whole
    (Backend.lacks_layouts: on CPU a while loop touching under 1 KiB an iteration,
    small_loops.py). XLA CPU lays out such a fusion's parameters and root only, and a reduce reads its operand through
    a layout (measured, test_passes_capability.py: a fused reduce in a while body or
    condition aborts, "has_layout()", as a root too), so it stays out. So does a
    broadcast_in_dim that widens a unit dim (1x1 -> 1x3): HLO's broadcast cannot, so
    XLA's import makes it a reshape dropping that dim, then a broadcast, both inside
    the fusion, and the broadcast reads the reshape through a layout it lacks there
    (measured: aborts, "has_layout() u32[1]", where XLA CPU emits a small loop as a
    nested computation; found in the corpus's random_gamma_float64_3 once the
    Threefry calls in its loop body were inlined)."""
    if name(op) == REDUCE:
        return ("a reduce in a loop XLA compiles whole needs layouts XLA gives no fused "
                "op there")
    if name(op) == "stablehlo.broadcast_in_dim" and widens_unit_dim(op):
        return ("a broadcast_in_dim widening a unit dim in a loop XLA compiles whole: XLA "
                "imports it as a reshape and a broadcast, which need layouts there")
    return None


def widens_unit_dim(broadcast) -> bool:
    """Whether a broadcast_in_dim maps an operand dim of size 1 to a larger one."""
    operation = broadcast.operation
    before = ir.RankedTensorType(operation.operands[0].type).shape
    after = ir.RankedTensorType(operation.results[0].type).shape
    return any(before[k] == 1 and after[d] != 1
               for k, d in enumerate(int_array(operation.attributes["broadcast_dimensions"])))


def int_array(attr) -> list[int]:
    """The ints of a dense array attribute (broadcast_dimensions, a reduce's
    dimensions, ...), read by index: listing it through its iterator costs 5x
    more (1.5 us for one element, measured on jaxlib 0.10.2)."""
    return [attr[k] for k in range(len(attr))]


def name(op) -> str:
    return op.operation.name


def constant_argument(op) -> bool:
    """A call of an identity function of inline_calls: a constant, once XLA inlines it."""
    return (op.operation.name == "func.call"
            and op.attributes["callee"].value.startswith(CONSTANT_ARGUMENT))


def is_side_effecting(op) -> bool:
    """Custom calls marked so, and ops that only exist for their effect."""
    op = op.operation
    attributes = op.attributes
    # most ops carry no attribute, and a length costs a tenth of a lookup by name
    if len(attributes) and "has_side_effect" in attributes:
        attr = attributes["has_side_effect"]
        return not isinstance(attr, ir.BoolAttr) or attr.value
    return op.name in _EFFECT_OPS


_EFFECT_OPS = frozenset({"stablehlo.outfeed", "stablehlo.send", "stablehlo.recv",
                         "stablehlo.infeed", "stablehlo.rng_bit_generator"})


def moves_data(op) -> bool:
    """Whether `op` changes shape or reduces: XLA never takes a fusion holding one
    for elementwise."""
    return name(op) in CHEAP_SHAPE or name(op) == REDUCE


def is_expensive(op) -> bool:
    n = name(op)
    if n == FUSION:
        return any(is_expensive(inner) for inner in fusion_body(op))
    if n == "stablehlo.divide" and float_constant_divisor(op):
        return False  # XLA's simplifier turns x / c into x * (1 / c): a multiply
    if n in ("stablehlo.divide", "stablehlo.remainder") and integer_scalar_divisor(op):
        return False  # as XLA's IsExpensive: LLVM makes it multiplies and shifts
    return n in EXPENSIVE_ELEMENTWISE or n == REDUCE


def _constant_divisor(op, element_kind):
    """The constant a divide (or remainder) of `element_kind` elements divides by,
    possibly broadcast from it, or None."""
    divisor = op.operation.operands[1]
    if not isinstance(ir.RankedTensorType(divisor.type).element_type, element_kind):
        return None
    producer = getattr(divisor.owner, "operation", None)
    if producer is not None and producer.name == "stablehlo.broadcast_in_dim":
        producer = getattr(producer.operands[0].owner, "operation", None)
    return producer if producer is not None and producer.name == "stablehlo.constant" else None


def float_constant_divisor(op) -> bool:
    """A floating-point divide by a constant, possibly broadcast from a scalar."""
    return _constant_divisor(op, ir.FloatType) is not None


def integer_scalar_divisor(op) -> bool:
    """An integer divide or remainder by a one-element constant, possibly broadcast."""
    constant = _constant_divisor(op, ir.IntegerType)
    return constant is not None and num_elements(constant.results[0].type) == 1


def static_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and t.has_static_shape


def element_type(t: ir.Type) -> str:
    """A tensor type's element type as text ("bf16"), or "" for other types. The
    common ones are named without printing them (a microsecond a type)."""
    if not isinstance(t, ir.RankedTensorType):
        return ""
    element = t.element_type
    text = _FLOAT_NAMES.get(type(element))
    if text is not None:
        return text
    if isinstance(element, ir.IntegerType) and element.is_signless:
        return f"i{element.width}"
    return str(element)


_FLOAT_NAMES = {ir.F16Type: "f16", ir.BF16Type: "bf16", ir.F32Type: "f32", ir.F64Type: "f64"}


def element_bytes(element_type: ir.Type) -> int:
    if isinstance(element_type, ir.ComplexType):
        return 2 * element_bytes(element_type.element_type)
    if isinstance(element_type, (ir.IntegerType, ir.FloatType)):
        return max(1, element_type.width // 8)
    return 8  # unknown element types: assume the widest common one


def num_elements(t: ir.Type) -> int:
    return math.prod(t.shape)


def type_bytes(t: ir.Type) -> int:
    """Bytes of a static tensor (0 for tokens, tuples and dynamic shapes)."""
    if not static_tensor(t):
        return 0
    return num_elements(t) * element_bytes(t.element_type)


def is_read(value: ir.Value) -> bool:
    """Whether any op reads `value` (without listing every use)."""
    return next(iter(value.uses), None) is not None


def fusion_body(op) -> list:
    """The ops of an mhlo.fusion region, without its terminator."""
    return list(op.operation.regions[0].blocks[0].operations)[:-1]


def fusion_roots(op) -> list[ir.Value]:
    """The values an mhlo.fusion returns (its terminator's, found without listing
    the body)."""
    return list(op.operation.regions[0].blocks[0].operations[-1].operands)


def folds_identical_integers(op) -> bool:
    """Whether `op` is x - x, x == x (any direction) or x ^ x of integers or bools,
    which XLA folds to a constant whatever x is (FOLDS_IDENTICAL_INTEGERS)."""
    operands = op.operation.operands
    return (name(op) in FOLDS_IDENTICAL_INTEGERS and len(operands) == 2
            and operands[0] == operands[1]
            and isinstance(operands[0].type.element_type, ir.IntegerType))


def unfusible_reason(op) -> str | None:
    """Why `op` may not join a fusion, or None if it may."""
    n = name(op)
    if is_side_effecting(op):
        return f"{n} has side effects"
    if n in NEVER_FUSED:
        return f"{n} stays its own kernel"
    if n == FUSION:
        return None
    if n not in KNOWN:
        return f"{n} is not an op the fusion passes understand"
    operands = list(op.operation.operands)
    empty = False
    for t in [v.type for v in operands] + list(op.operation.results.types):
        if not static_tensor(t):
            return f"{n} has a non-static or non-tensor type"
        empty |= 0 in t.shape
    if n in IDEMPOTENT and len(set(operands[-2:])) == 1 or (
            n in FOLDS_IDENTICAL_INTEGERS and folds_identical_integers(op)):
        # XLA folds select(p, x, x), max(x, x), integer x - x, ...: fused, the values
        # only that op read become unread fusion parameters, which XLA's verifier refuses
        return f"XLA folds {n} of identical operands"
    if empty:
        return f"{n} has a zero-element tensor"  # XLA folds it, leaving unused fused parameters
    if n == "stablehlo.convert" and bool_to_float_read_by_dot(op):
        return ("a bool converted for a dot_general: XLA's simplifier makes the dot a "
                "select of the bool where it sees the convert, as under JAX's jit")
    if n == REDUCE and not plain_reducer(op):
        return "reduce body uses values from outside or non-StableHLO ops"
    return None


def bool_to_float_read_by_dot(convert) -> bool:
    """Whether `convert` makes floats of bools for a dot_general, directly or through
    reshapes (fuzz jit 5326 reshaped the bools of a vector matmul, as our numpy
    once lowered it, to a [1, n] by [n, 1] dot). XLA's simplifier turns a dot with
    an operand free of free dimensions into a multiply, and multiply(y, convert(p))
    into select(p, y, 0): 0 where p is false, even for an infinite or nan y (not in
    f16 and bf16, which it multiplies in f32 between converts). When it does
    depends on the dot's shapes in ways not repeated here (fuzz jit 10903, 11247,
    loop 10237: a one-element nan vector times a false bool vector is 0 under
    JAX's jit); left unfused, the convert and the dot reach XLA as JAX hands them
    over, so it decides alike. (Not always: with several such dots in one module, the order
    its simplifier visits them in matters too, and other rewrites of ours may
    change it.)"""
    operation = convert.operation
    if (str(operation.operands[0].type.element_type) != "i1"
            or isinstance(operation.results[0].type.element_type, ir.IntegerType)):
        return False
    values = [operation.results[0]]
    while values:
        for use in values.pop().uses:
            user = name(use.owner)
            if user == "stablehlo.dot_general":
                return True
            if user == "stablehlo.reshape":
                values.append(use.owner.operation.results[0])
    return False


def bool_for_a_dot(value) -> bool:
    """Whether `value`, a dot_general's operand, is a convert of bools
    (bool_to_float_read_by_dot), or a reshape of one."""
    while not isinstance(value.owner, ir.Block) and name(value.owner) == "stablehlo.reshape":
        value = value.owner.operation.operands[0]
    owner = value.owner
    return (not isinstance(owner, ir.Block) and name(owner) == "stablehlo.convert"
            and bool_to_float_read_by_dot(owner))


def reducer(op) -> str | None:
    """The op a one-result reduce combines its two arguments with, in either order
    ("stablehlo.add", ...), or None for any other body."""
    operation = op.operation
    if len(operation.results) != 1:
        return None
    body = operation.regions[0].blocks[0]
    inner = list(body.operations)
    if len(inner) != 2 or inner[1].operation.operands[0] != inner[0].operation.results[0]:
        return None
    operands = list(inner[0].operation.operands)
    return (name(inner[0]) if len(operands) == 2 and operands[0] != operands[1]
            and set(operands) == set(body.arguments) else None)


def plain_reducer(op) -> bool:
    """Whether a reduce's body reads its own arguments only, with StableHLO ops."""
    body = op.operation.regions[0].blocks[0]
    args = set(body.arguments)
    inner = list(body.operations)
    return all(name(o).startswith("stablehlo.") and not o.operation.regions
               and all(v in args or _defined_in(v, body) for v in o.operation.operands)
               for o in inner)


def _defined_in(value: ir.Value, block: ir.Block) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.block == block


def reuses_operand(op, operand_index: int) -> bool:
    """Whether `op`, emitted as a loop, reads an element of that operand more than
    once: a fused expensive producer would be recomputed for each read."""
    n = name(op)
    if n in ("stablehlo.broadcast_in_dim", "stablehlo.broadcast"):
        return num_elements(op.operation.results[0].type) > num_elements(
            op.operation.operands[0].type)
    if n == FUSION:
        return _reused_inside(op.operation.regions[0].blocks[0].arguments[operand_index])
    return False


def _reused_inside(value: ir.Value) -> bool:
    """Whether a value inside a fusion body is read more than once per element,
    directly or through the ops it feeds (each op visited once: a fused body is a
    DAG, and a walk of its paths doubled per rung of a squaring ladder)."""
    todo, seen = [value], set()
    while todo:
        for use in todo.pop().uses:
            user = use.owner
            if name(user) == "stablehlo.return":
                continue
            if reuses_operand(user, use.operand_number):
                return True
            if name(user) != REDUCE and user.operation not in seen:
                seen.add(user.operation)
                todo.extend(user.operation.results)
    return False

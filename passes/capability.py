"""What XLA compiles inside a fusion: the Backend (limits, and hooks for what XLA
does after us; the backends themselves are in backends.py), and fusion_problem, the
check that runs before XLA sees a fusion.

Measured on jaxlib 0.10.2's CPU client (python_tests/test_passes_capability.py
re-measures each CPU claim in a subprocess, since a failure there is an abort):
single-output kLoop fusions with elementwise, broadcast and reduce ops inside
compile; kInput fusions are refused ("Unsupported fusion kind"); a multi-output
(tuple-root) kLoop fusion aborts the process; a fusion whose root is one variadic
reduce compiles. The GPU entries follow XLA's GPU emitters (loop, input/reduction,
multi-output); they are not measured here.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from jaxlib.mlir import ir

from . import opinfo
from .cost import CostParams
from .xla_import import folded_fusions


# Fused ops whose emitters need layouts, which XLA assigns only after its own fusion
# pass: inside our fusions they abort XLA CPU ("Check failed: has_layout()").
# Measured (python_tests/test_passes_capability.py and the StableHLO corpus):
# transpose, concatenate, a reshape that moves elements and a broadcast_in_dim that
# permutes dims abort anywhere in a fusion; a unit-dim reshape, and what XLA turns
# into one (a broadcast adding only unit dims, a reduce over unit dims), aborts as
# a fusion root. Inside a fusion they passed small probes but aborted on the
# corpus once XLA's simplifier moved them, so all of them stay out.
LAYOUT_SENSITIVE = frozenset({"stablehlo.transpose", "stablehlo.concatenate",
                              "stablehlo.reshape"})


def layout_problem(op) -> str | None:
    """Why `op` needs layouts anywhere in a fusion, or None."""
    n = opinfo.name(op)
    operation = op.operation
    if n in LAYOUT_SENSITIVE:
        return f"{n} needs layouts XLA assigns after fusion"
    if n == "stablehlo.constant" and op.operation.results[0].type.rank:
        return "a non-scalar constant stays a literal buffer"  # fused, XLA CPU aborts relayouting it
    if reshape_like(op):
        return f"{n} acts as a reshape to XLA, which needs layouts"
    if n == "stablehlo.pad" and any(
            v < 0 for key in ("edge_padding_low", "edge_padding_high")
            for v in opinfo.int_array(operation.attributes[key])):
        # XLA makes it a slice of a pad (found by the fuzzer: bf16, aborts XLA CPU)
        return "a pad with negative padding is a slice to XLA, which needs layouts"
    if n == "stablehlo.broadcast_in_dim":
        dims = opinfo.int_array(operation.attributes["broadcast_dimensions"])
        if dims != sorted(dims):
            return "a transposing broadcast_in_dim needs layouts XLA assigns after fusion"
    return None


def select_problem(op, outside: list[bool], makers: list | None = None) -> str | None:
    """XLA infers a select's shape from its predicate's, then reads on_true's layout.
    Inside our fusions only parameters, constants and the root keep layouts (see
    shared_value_problem), so a predicate read from outside with an on_true computed
    inside aborts XLA CPU ("has_layout()" in InferSelectShape). So on_true must be
    read from outside unless the predicate is a fused compare of numbers: XLA's
    simplifier turns other computed predicates into parameters (select(not(p), a, b)
    -> select(p, b, a); and(p, true) -> p; p == true -> p: measured,
    test_passes_capability.py), never a compare of numbers, which stays a compare or
    folds to a constant (the select then folds too). When the predicate is a fused
    not, on_false must come from outside too, since that swap makes it on_true
    (fuzzer, jit seed 2034: select(not(x), x, not(x)) on bool). A bf16 select XLA CPU
    computes in f32, so its on_true is always a convert made inside the fusion (found
    by the fuzzer): with a non-scalar predicate it stays out. `outside[k]`: whether
    the fusion reads operand k from outside; `makers[k]`: the fused op that makes it
    (default: its owner; legality passes what a member fusion's parameter will be
    once the group is one fusion, hlo-opt seed 1665)."""
    if opinfo.name(op) != "stablehlo.select":
        return None
    operands = op.operation.operands
    if makers is None:
        makers = [None if isinstance(v.owner, ir.Block) else v.owner for v in operands]
    predicate = makers[0]
    if not outside[1] and (outside[0] or not fused_number_compare(predicate)):
        return "a fused select needs its on_true operand from outside the fusion (layouts)"
    if (not outside[0] and not outside[2] and _is_op(predicate)
            and opinfo.name(predicate) == "stablehlo.not"):
        return ("a fused select on a fused not: XLA swaps its operands, so on_false "
                "becomes on_true and must come from outside the fusion too (layouts)")
    if (opinfo.element_type(operands[1].type) == "bf16"
            and ir.RankedTensorType(operands[0].type).rank):
        return ("a fused bf16 select: XLA CPU converts its on_true to f32 inside the "
                "fusion, where the convert has no layout (aborts)")
    return None


def bitwise_of_narrowing_problem(op, makers: list | None) -> str | None:
    """XLA CPU dies of SIGSEGV compiling a fusion in which an and or an or reads a
    convert from a signed integer type to a narrower one made in that fusion (i32 to
    i8 or i16, i64 to i32 or i8; jaxlib 0.10.2, whose own fusion does the same:
    JAX's jit of x.astype(int8) & y crashes; fuzz jit --loop seed 9026). Measured in
    subprocesses: an unsigned source or target, an xor, a convert read through
    another op, or one element compile. `makers[k]`: the fused op that makes operand
    k (None: from outside)."""
    if opinfo.name(op) not in ("stablehlo.and", "stablehlo.or") or makers is None:
        return None
    for maker in makers:
        if (_is_op(maker) and opinfo.name(maker) == "stablehlo.convert"
                and _signed_narrowing(maker.operation)):
            return (f"a fused {opinfo.name(op)} of a narrowing signed integer convert "
                    "crashes XLA CPU's compiler (SIGSEGV)")
    return None


def _signed_narrowing(convert) -> bool:
    """Of more than one element: one (a rank-0 tensor, say) compiles."""
    result = ir.RankedTensorType(convert.results[0].type)
    source = ir.RankedTensorType(convert.operands[0].type).element_type
    target = result.element_type
    return (isinstance(source, ir.IntegerType) and isinstance(target, ir.IntegerType)
            and source.is_signless and target.is_signless and 1 < target.width < source.width
            and (not result.has_static_shape or opinfo.num_elements(result) > 1))


def fused_number_compare(maker) -> bool:
    """Whether `maker`, the fused op making a value, is a compare of numbers (not of
    booleans), which XLA's simplifier never makes a parameter."""
    return (_is_op(maker) and opinfo.name(maker) == "stablehlo.compare"
            and opinfo.element_type(maker.operation.operands[0].type) != "i1")


def _is_op(maker) -> bool:
    """An op, not a parameter (a block argument or a value from outside), nor None."""
    return maker is not None and not isinstance(maker, (ir.Block, ir.Value))


# What XLA's HLO counts as elementwise (HloInstruction::IsOpElementwise); a
# bitcast_convert between widths is not, so none counts here.
HLO_ELEMENTWISE = (opinfo.CHEAP_ELEMENTWISE | opinfo.EXPENSIVE_ELEMENTWISE) - {
    "stablehlo.bitcast_convert"}


def region_read_problem(op, outside: list[bool]) -> str | None:
    """Where XLA compiles a loop whole (Backend.lacks_layouts: on CPU a while loop
    touching under 1 KiB an iteration, small_loops.py) it lays out a fusion's
    parameters, constants and root only, so a fused op that reads its operand through a layout (anything
    not elementwise at one shape: broadcast, reverse, slice, ...) must read a
    parameter or a constant (measured, test_passes_capability.py: a broadcast of a
    fused convert in a scan body aborts, "has_layout()"; benchmarks/control_flow.py
    found it in an RNN whose step scales by its integer counter), and not a bf16 one,
    which XLA CPU converts to f32 inside the fusion (fuzz.py --loop, jit seeds 16 and
    43; random.f in bf16). `outside[k]`: whether the fusion reads operand k from outside."""
    operands = op.operation.operands
    shape = ir.RankedTensorType(op.operation.results[0].type).shape
    if opinfo.name(op) in HLO_ELEMENTWISE and all(
            ir.RankedTensorType(v.type).shape == shape for v in operands):
        return None
    for v, out in zip(operands, outside):
        if opinfo.element_type(v.type) == "bf16":
            return (f"a fused {opinfo.name(op)} of bf16, in a loop XLA compiles whole: XLA "
                    "CPU converts it to f32 in the fusion, where only parameters and the "
                    "root have layouts (aborts)")
        if not out and (isinstance(v.owner, ir.Block)
                        or opinfo.name(v.owner) != "stablehlo.constant"):
            return (f"a fused {opinfo.name(op)} reading a value computed in the fusion, "
                    "in a loop XLA compiles whole: it lays out only the parameters and "
                    "root of a fusion there (aborts)")
    return None


def shared_value_problem(operations: list, makers: list[list], memo: dict | None = None,
                         sure_merges_only: bool = False) -> str | None:
    """Why XLA CPU's loop emitter aborts on a fusion of `operations` (in topological
    order), `makers[k]` saying what makes each operand of the k-th: the index of
    a fused op, or the ir.Value a fusion parameter holds (indices: hashing an
    operation costs more than the rest of a lookup). The emitter splits a fusion into functions
    (PartitionedComputation): an op read by several ops that are not all
    elementwise under one index map ends a function, whose result type needs the
    op's layout. XLA fuses after layout assignment, so its own fusions have
    layouts; inside ours layout assignment keeps them only on parameters,
    constants and the root, and XLA aborts ("has_layout()" in
    CreateSubgraphMlirFunction; found by the fuzzer: a value read by a slice and
    an or, a softmax's exp read by its reduce and its divide). A bf16 parameter
    counts as computed: XLA CPU computes bf16 in f32, converting it inside the
    fusion. XLA's CSE runs first, so identical ops (same name, operands and
    attributes) count as one: two copies of a reverse, each read by a slice, are
    one reverse read by two (tracehlo.lax.associative_scan(reverse=True)). This
    repeats the emitter's partitioning, users before producers. `memo` keeps what
    XLA's CSE compares per op between calls on an unchanged module.

    Keying values from outside by their type makes two ops one where XLA's
    simplifier might fold their operands into one: that finds more sharing, but a
    merge can also hide some (two ops read by one reader). `sure_merges_only`
    refuses a fusion whose verdict rests on such a merge."""
    memo = {} if memo is None else memo
    names = [o.name for o in operations]
    keys, implicit, speculative = _identical_ops(operations, makers, memo, names)
    if speculative and sure_merges_only:
        return ("ops XLA's CSE makes one only if its simplifier folds their different "
                "operands into one: the emitter's functions depend on whether it does")
    readers: dict = {}  # node key -> {reader's key: reader's index}
    nodes: dict = {}  # key -> node: bf16 parameters first, then the fused ops
    for k, (key, made_by) in enumerate(zip(keys, makers)):
        if k in implicit:  # the select reads its predicate's broadcast, and the
            # predicate itself as before (made the broadcast's operand instead, a scalar
            # computed in the fusion got a function of its own, and groups XLA
            # compiles were refused: hlo-opt seed 10528)
            readers.setdefault(implicit[k], {})[key] = k
        for p in made_by:
            if type(p) is int:
                p = keys[p]
            elif isinstance(p, ir.Value):
                if _parameter_element_type(p, memo) != "bf16":
                    continue
                p = bf16_parameter_source(p, memo)  # two XLA makes one are one
                nodes[p] = p
            readers.setdefault(p, {})[key] = k
    # identical ops are one, where the first of them is (users come before producers)
    for k, (op, key) in enumerate(zip(operations, keys)):
        if k in implicit:
            nodes.setdefault(implicit[k], _ImplicitBroadcast())
        nodes[key] = op
    ids: dict = {}  # op -> (function, index map), as the emitter numbers them
    fresh = itertools.count()
    for key, node in reversed(nodes.items()):
        read_by = readers.get(key)
        if read_by is None:
            ids[key] = (next(fresh), next(fresh))
            continue
        users = list(read_by.values())
        user_ids = {ids[k] for k in read_by}
        # a multi-result op is read through one get-tuple-element per result
        results = (node,) if isinstance(node, ir.Value) else node.operation.results
        if len(results) == 1:
            n_users = len(users)
            if len(user_ids) == 1 and all(names[u] in HLO_ELEMENTWISE for u in users):
                ids[key] = user_ids.pop()
                continue
        else:
            results = list(results)
            n_users = len({k for u in users for k, r in enumerate(results)
                           if r in list(operations[u].operands)})
        if n_users > 1:
            ids[key] = (next(fresh), next(fresh))
            what = ("a bf16 fusion parameter (XLA CPU converts it to f32 inside the fusion)"
                    if isinstance(node, ir.Value) else opinfo.name(node))
            # a constant has its layout, unless bf16: XLA CPU converts it to f32 in the
            # fusion like a bf16 parameter (two bf16 pads sharing a zero: fuzz jit 647)
            if what != "stablehlo.constant" or opinfo.element_type(
                    node.operation.results[0].type) == "bf16":
                return (f"{what} read by {len(users)} fused ops "
                        f"({', '.join(sorted({names[u] for u in users}))}) ends a "
                        "function of XLA CPU's loop emitter, which needs a layout it "
                        "lacks inside our fusions (aborts)")
        else:
            ids[key] = (ids[next(iter(read_by))][0], next(fresh))
    return reduce_cone_problem(operations, makers, names)


def reduce_cone_problem(operations: list, makers: list[list],
                        names: list[str] | None = None) -> str | None:
    """A reduce read inside the fusion (not only its root) whose operand is computed
    through a broadcast or other data movement of a value computed in the fusion,
    while a parameter read in that computation is also read elsewhere in the
    fusion: XLA CPU's loop emitter asks for the moved value's layout, which it
    lacks, and aborts ("has_layout()", fuzz jit 1902: a sum of
    broadcast(x) + broadcast(convert(y)), then sum - broadcast(x)). Measured with
    subprocess probes: without the shared parameter, or with the reduce as the
    root, XLA compiles it. Conservative beyond that: it can refuse a fusion XLA
    would have compiled. `names`: the operations' names, if known."""
    names = [o.name for o in operations] if names is None else names
    if opinfo.REDUCE not in names:
        return None
    fused: list[list[int]] = []  # per op, the fused ops making its operands
    outer: list[list] = []  # per op, the values it reads from outside
    readers: dict = {}  # value from outside -> the ops reading it
    moves = []  # per op, whether it moves (CHEAP_SHAPE) a value computed in the fusion
    for k, made_by in enumerate(makers):
        fused.append([])
        outer.append([])
        computed = False
        for p in made_by:
            if type(p) is int:
                fused[k].append(p)
                computed |= names[p] != "stablehlo.constant"
            elif isinstance(p, ir.Value):
                outer[k].append(p)
                readers.setdefault(p, set()).add(k)
            else:
                computed |= p.name != "stablehlo.constant"
        moves.append(computed and names[k] in opinfo.CHEAP_SHAPE)
    read = {j for js in fused for j in js}
    for r, name in enumerate(names):
        if name != opinfo.REDUCE or r not in read:
            continue
        cone, todo = set(), list(fused[r])
        while todo:
            o = todo.pop()
            if o not in cone:
                cone.add(o)
                todo += fused[o]
        if not any(moves[o] for o in cone):
            continue
        inside = cone | {r}
        if any(not readers[p] <= inside for o in inside for p in outer[o]):
            return ("a reduce read inside the fusion whose operand moves a value computed "
                    "in it, with a parameter it reads also read elsewhere in the fusion: "
                    "XLA CPU's loop emitter needs a layout it lacks (aborts)")
    return None


def parameter_source(value: ir.Value, memo: dict) -> ir.Value:
    """The value a fusion parameter holds once XLA's simplifier and CSE have run: its
    _identity_source, and one value for all that XLA's CSE makes one op (the same op
    of the same operands, constants by their value), as XLA then passes the fusion one
    parameter for them (two converts of two equal constants were two bf16 parameters
    to us, one read by a reverse and one by an add, and one bf16 parameter read twice
    to XLA CPU, which aborted: fuzz jit --transform grad 477). Kept in `memo`."""
    key = ("identity source", value)
    if key not in memo:
        source = _identity_source(value)
        memo[key] = memo.setdefault(("cse source", _cse_number(source, memo)), source)
    return memo[key]


def bf16_parameter_source(value: ir.Value, memo: dict) -> ir.Value:
    """parameter_source for the rule that a bf16 parameter read twice ends an emitter
    function, which must not miss one: every value XLA folds to a constant (computed
    from constants alone) counts as one per type. XLA folds each to a literal, and its
    CSE makes equal literals one, whatever ops made them (a slice of a converted
    constant and a converted shorter one, both [2.5, 2.04, 1.08]: fuzz jit --transform
    grad 477). Conservative: two different such constants read in one fusion count as
    one parameter read twice."""
    source = parameter_source(value, memo)
    if memo[("folds to a constant", source)]:
        return memo.setdefault(("folded constant", source.type), source)
    return source


def _cse_number(value: ir.Value, memo: dict):
    """What XLA's CSE sees of an outside value, kept in `memo`: cse_id of its op over
    the numbers of its operands' identity sources, numbered bottom-up without
    recursion (a chain of thousands of ops). A block argument, an op with regions or
    with effects, and a result of a multi-result op stay themselves. Also kept: whether
    the value folds to a constant (bf16_parameter_source)."""
    key = ("cse number", value)
    todo = [value]
    while todo:
        v = todo[-1]
        if ("cse number", v) in memo:
            todo.pop()
            continue
        op = v.owner.operation if isinstance(v, ir.OpResult) else None
        if (op is None or len(op.regions) or len(op.results) != 1
                or opinfo.is_side_effecting(op)):
            memo[("cse number", v)], memo[("folds to a constant", v)] = v, False
            todo.pop()
            continue
        sources = [_identity_source(u) for u in op.operands]
        pending = [u for u in sources if ("cse number", u) not in memo]
        if pending:
            todo.extend(pending)
            continue
        memo[("cse number", v)] = cse_id(op, [memo[("cse number", u)] for u in sources], memo)
        memo[("folds to a constant", v)] = (op.name == "stablehlo.constant" or bool(sources)
                                            and all(memo[("folds to a constant", u)]
                                                    for u in sources))
        todo.pop()
    return memo[key]


def _parameter_element_type(value: ir.Value, memo: dict) -> str:
    key = ("element type", value)
    if key not in memo:
        memo[key] = opinfo.element_type(value.type)
    return memo[key]


def _identical_ops(operations: list, makers: list[list], memo: dict,
                   names: list[str]) -> tuple[list, dict, bool]:
    """Each fused op's key after XLA's CSE (shared_value_problem's `operations` and
    `makers`): ops without regions with the same name, attributes, result types and
    operand keys share one (a parameter value's key is parameter_key's). Ops with
    regions keep their own (XLA's CSE also compares their computations; not
    repeated here). Attributes are printed, the cost of a key, only for ops that
    agree in all else. Also the key of the broadcast XLA's import puts under each
    select of a scalar predicate (HLO's select takes a predicate of its shape), by
    the select's index: it is one op with a broadcast of the same bool there
    (hlo-opt seed 10325: two such, read in different emitter functions, aborted).
    Last, whether two ops were made one although they read different values from
    outside (speculative: parameter_key keys those by their type)."""
    keys: list = []
    implicit: dict = {}
    # (name, result types, operand keys) -> {attributes: a small int}, so that keys
    # never nest (a nested tuple hashes its whole expression tree, exponential on a
    # shared DAG); the first op of a kind keeps None for its attributes until a
    # second one comes
    numbers: dict = {}
    firsts: dict = {}
    speculative = False
    # the broadcasts of scalar bools matter only beside a select of a scalar predicate
    broadcasts = ("stablehlo.select", "stablehlo.broadcast_in_dim") if any(
        name == "stablehlo.select" and _predicate_broadcast_shape(o, memo) is not None
        for name, o in zip(names, operations)) else ()
    for k, (operation, made_by, name) in enumerate(zip(operations, makers, names)):
        if len(operation.regions):
            keys.append(operation)
            continue
        operand_keys = tuple(  # parameter_key's memo looked up here: asked most
            (keys[p] if p < k else operations[p]) if type(p) is int else
            (memo.get(p) or parameter_key(p, memo)) if isinstance(p, ir.Value) else p
            for p in made_by)
        shape = _predicate_broadcast_shape(operation, memo) if name in broadcasts else None
        if shape is not None:
            kind = (_PREDICATE_BROADCAST, shape, operand_keys[0])
            own = -1 - k if name == "stablehlo.select" else k
            key = numbers.setdefault(kind, {None: own})[None]
            if key != own:
                speculative = speculative or not _same_sources(made_by[:1], makers[
                    -1 - key if key < 0 else key][:1], memo)
            if name == "stablehlo.select":
                implicit[k] = key
            else:
                keys.append(key)
                continue
        kind = (name, tuple(operation.results.types), operand_keys)
        same = numbers.get(kind)
        if same is None:
            numbers[kind], firsts[kind] = {None: k}, operation
            keys.append(k)
            continue
        if None in same:
            same[_own_key(firsts[kind], memo)[2]] = same.pop(None)
        key = same.setdefault(_own_key(operation, memo)[2], k)
        if key != k:
            speculative = speculative or not _same_sources(made_by, makers[key], memo)
        keys.append(key)
    return keys, implicit, speculative


def _same_sources(made_by: list, other: list, memo: dict) -> bool:
    """Whether two ops that _identical_ops keys alike read the same values from
    outside (the fused ops they read are one already, having one key)."""
    return all(parameter_source(p, memo) == parameter_source(q, memo)
               for p, q in zip(made_by, other)
               if isinstance(p, ir.Value) and isinstance(q, ir.Value))


# a broadcast of a scalar bool: its one attribute, no dimensions, says nothing more
_PREDICATE_BROADCAST = "broadcast of a scalar bool"


def _predicate_broadcast_shape(operation, memo: dict):
    """The shape a select of a scalar predicate has XLA's import broadcast its
    predicate to, or a broadcast of a scalar bool makes; None for other selects and
    broadcasts. Kept in `memo` per op."""
    key = (_PREDICATE_BROADCAST, operation)
    if key not in memo:
        operand, result = operation.operands[0].type, operation.results[0].type
        memo[key] = (tuple(result.shape) if not operand.rank and result.rank and (
            operation.name == "stablehlo.select" or opinfo.element_type(operand) == "i1")
            else None)
    return memo[key]


class _ImplicitBroadcast:
    """shared_value_problem's node for the broadcast XLA's import puts under a select
    of a scalar predicate, as an op of it: no op of ours holds it."""
    name = "the broadcast XLA's import makes of a select's scalar predicate,"
    results = (None,)

    @property
    def operation(self):
        return self


def parameter_key(value: ir.Value, memo: dict | None = None):
    """A fusion parameter as XLA's CSE may come to see it. Block arguments stay distinct;
    values computed outside the fusion are keyed by their type alone, because XLA's
    simplifier can fold two of them into one constant that CSE then passes to the fusion
    as one parameter where we saw two (an argmax over a unit axis and a one-element
    argsort are both 0: a broadcast of each became one broadcast read through a reverse
    and directly, and XLA CPU aborted, fuzz jit 677). A value XLA's simplifier makes
    a block argument (a reverse of unit dims of it) is that argument: read as one
    parameter and through the reverse as another, a bf16 argument was one parameter
    read twice to XLA CPU, which aborted (fuzz hlo-opt 7133). Conservative: it can
    refuse a fusion XLA would have compiled. `memo` keeps the answer per value."""
    if memo is not None:
        if value not in memo:
            memo[value] = parameter_key(value)
        return memo[value]
    source = _identity_source(value)
    return source if isinstance(source, ir.BlockArgument) else value.type


def _identity_source(value: ir.Value) -> ir.Value:
    """What `value` is after XLA's simplifier drops the ops that return their operand
    unchanged: a reverse of unit dims, and a reshape, convert, transpose, broadcast,
    slice or zero pad to the operand's own type. (A value is an OpResult or a
    BlockArgument: asking its class costs a twentieth of asking its owner.)"""
    while isinstance(value, ir.OpResult):
        op = value.owner.operation
        name = op.name  # asked first: most producers are none of these
        if name == "stablehlo.reverse":
            operand = op.operands[0]
            shape = operand.type.shape
            identity = all(shape[d] == 1 for d in opinfo.int_array(op.attributes["dimensions"]))
        elif name in _IDENTITY_AT_SAME_TYPE:
            operand = op.operands[0]
            identity = operand.type == value.type and _identity_attributes(op)
        else:
            return value
        if not identity:
            return value
        value = operand
    return value


_IDENTITY_AT_SAME_TYPE = frozenset({
    "stablehlo.reshape", "stablehlo.convert", "stablehlo.transpose",
    "stablehlo.broadcast_in_dim", "stablehlo.slice", "stablehlo.pad"})


def _identity_attributes(op) -> bool:
    """Whether `op`, whose result has its operand's type, returns the operand as it is
    (a slice of equal shape is whole; a pad of equal shape may shift)."""
    if op.name == "stablehlo.transpose":
        permutation = opinfo.int_array(op.attributes["permutation"])
        return permutation == sorted(permutation)
    if op.name == "stablehlo.broadcast_in_dim":
        dims = opinfo.int_array(op.attributes["broadcast_dimensions"])
        return dims == sorted(dims)
    if op.name == "stablehlo.pad":
        return not any(v for key in ("edge_padding_low", "edge_padding_high", "interior_padding")
                       for v in opinfo.int_array(op.attributes[key]))
    return True


def cse_id(operation, operand_keys, memo: dict) -> int:
    """What XLA's CSE compares of an op without regions, as a number kept in
    `memo`: two ops get one number (the keys of their operands given) when they
    are one op to it. An op's attributes are printed (the cost of a key) only once
    a second op agrees with it in all else, and a number hashes faster than the
    key it stands for."""
    table = memo.get(_CSE_IDS)
    if table is None:
        table = memo[_CSE_IDS] = ({}, itertools.count())
    numbers, fresh = table
    kind = (operation.name, tuple(operation.results.types), tuple(operand_keys))
    same = numbers.get(kind)
    if same is None:  # the first op of its kind keeps None for its attributes
        number = next(fresh)
        numbers[kind] = {None: (number, operation)}
        return number
    if None in same:
        number, first = same[None]
        if first == operation:
            return number
        same[_own_key(first, memo)[2]] = same.pop(None)[0]
    attributes = _own_key(operation, memo)[2]
    number = same.get(attributes)
    if number is None:
        number = same[attributes] = next(fresh)
    return number


_CSE_IDS = "numbered XLA-CSE keys"


def _own_key(operation, memo: dict | None) -> tuple:
    """An op's name, result types and attributes, kept in `memo` per op (printing
    the attributes is the cost). Types are uniqued in their context, so a type is
    its own key (printing it costs 5x more)."""
    own = memo.get(operation) if memo is not None else None
    if own is None:
        own = (operation.name, tuple(operation.results.types),
               # by index: a NamedAttribute prints without downcasting its value (a
               # complex dense attribute has no Python class to downcast to)
               tuple(sorted(str(operation.attributes[i])
                            for i in range(len(operation.attributes)))))
        if memo is not None:
            memo[operation] = own
    return own


def in_region(op) -> bool:
    """Whether `op` sits in a block of a while, case or if region."""
    parent = op.operation.parent
    return parent is not None and parent.name in opinfo.CONTROL_FLOW


def unread_outputs_problem(n_outputs: int, n_unread: int) -> str | None:
    """XLA drops a multi-output fusion's unread outputs; left with two or more, the
    variadic reduce root becomes a tuple of its elements, a multi-output fusion XLA
    CPU cannot emit (aborts, "has_layout()" in GetWorkDimensions; fuzzer: an argmin
    pair reduced with a third value nothing reads). One left becomes a single output."""
    if n_unread and n_outputs - n_unread > 1:
        return (f"{n_unread} of the {n_outputs} outputs unread: XLA drops them, leaving a "
                "tuple-root fusion CPU cannot compile")
    return None


def body_producers(fusion, fused: list) -> tuple[list, list[list]]:
    """shared_value_problem's view of an mhlo.fusion's body, `fused` its ops
    (opinfo.fusion_body): a parameter is the value the fusion reads from outside
    (what XLA's CSE compares)."""
    outer = dict(zip(fusion.operation.regions[0].blocks[0].arguments, fusion.operation.operands))
    operations = [op.operation for op in fused]
    # by result: asking a value for its owner costs more than hashing it
    made = {r: k for k, o in enumerate(operations) for r in o.results}
    return operations, [[outer[v] if v in outer else made[v] if v in made else v.owner.operation
                         for v in operation.operands] for operation in operations]


def reshape_like(op) -> bool:
    """Whether XLA sees `op` as a reshape that only adds or removes unit dims."""
    n = opinfo.name(op)
    operation = op.operation
    if n in ("stablehlo.reshape", "stablehlo.broadcast_in_dim", "stablehlo.broadcast"):
        before, after = operation.operands[0].type.shape, operation.results[0].type.shape
        return ([d for d in before if d != 1] == [d for d in after if d != 1]
                and (n == "stablehlo.reshape" or before != after))
    if n == opinfo.REDUCE:
        shape = operation.operands[0].type.shape
        return all(shape[d] == 1 for d in opinfo.int_array(operation.attributes["dimensions"]))
    return False


class UnsupportedFusionError(ValueError):
    """A fusion the backend cannot compile; raised before XLA sees it, because for
    some of these XLA aborts the process instead of raising."""


@dataclass(frozen=True)
class Backend:
    """An XLA backend as the passes see it: its limits (fields) and what XLA does
    after us (hook methods). The framework and the passes ask these and never which
    backend they talk to, so another target is another Backend (backends.py). Each
    hook's default is what XLA does on any device (its import, its own passes); a
    backend that also takes work away from loop fusions, such as XLA CPU's library
    kernels, overrides the hooks that say so."""
    name: str
    kinds: frozenset[str]       # fusion_kind values XLA accepts
    multi_output: bool          # tuple-root fusions (other than one variadic reduce)
    reduce_inside_loop: bool    # a reduce feeding other ops (other reduces too) in a loop fusion
    max_operands: int           # operands + outputs of one fusion
    cost: CostParams
    # fusing layout-sensitive ops: XLA CPU aborts on them; on GPU our fusions also
    # reach XLA before its layout assignment, so the same is assumed (not measured)
    layout_sensitive_ops: bool = False
    # ops XLA rewrites into others before its own fusion, so its fused emitter lacks them
    unfusible_ops: frozenset[str] = frozenset()
    # ops whose fused emitter reads their result's layout, which inside our fusions
    # (made before XLA's layout assignment) only parameters, constants and the root have
    ops_reading_layouts: frozenset[str] = frozenset()
    # element types a multi-result reduce may not have inside a fusion
    variadic_reduce_unfusible_types: frozenset[str] = frozenset()
    # ops one fusion may hold (None: no bound)
    max_fused_ops: int | None = None
    # the options XLA's client gives its import's chlo-legalize-to-high-level-mhlo pass:
    # the CHLO ops it keeps as HLO ops rather than expanding them (chlo_legalize.py)
    chlo_to_mhlo_options: str = ""

    def op_problem(self, op) -> str | None:
        """Why this backend cannot compile `op` inside a fusion, or None."""
        return self.problem_given(op, opinfo.unfusible_reason(op))

    def problem_given(self, op, unfusible: str | None) -> str | None:
        """op_problem, given opinfo.unfusible_reason(op) (a DataflowGraph keeps it per node)."""
        name = opinfo.name(op)
        if name in self.unfusible_ops:
            return (f"{name} is expanded by XLA {self.name} before fusion; "
                    "its fused emitter does not support it")
        if name in self.ops_reading_layouts:
            return (f"XLA {self.name}'s emitter reads a fused {name}'s layout, "
                    "which our fusions cannot give it (it aborts: has_layout())")
        results = op.operation.results
        if name == opinfo.REDUCE and len(results) > 1:
            reason = self.variadic_reduce_problem([r.type for r in results])
            if reason:
                return reason
        if unfusible is None and not self.layout_sensitive_ops:
            return layout_problem(op)
        return unfusible

    def variadic_reduce_problem(self, result_types) -> str | None:
        """Why a fused reduce with these results (more than one) cannot compile here."""
        bad = {str(t.element_type) for t in result_types} & self.variadic_reduce_unfusible_types
        if bad:
            return (f"a multi-result reduce of {', '.join(sorted(bad))}: XLA {self.name} "
                    "widens it to f32 after fusion and aborts (convert without layout)")
        return None

    def fusion_kind(self, roots_are_reduce: bool) -> str:
        return "kInput" if roots_are_reduce and "kInput" in self.kinds else "kLoop"

    # Hooks: what XLA does after us, asked by the framework, the passes and the pass
    # manager.

    def lacks_layouts(self, block: ir.Block) -> bool:
        """Whether XLA emits the fusions in `block`, a block of a while, case or if
        region, with layouts on their parameters, constants and root only, so that
        the region rules (opinfo.region_problem, region_read_problem) apply there."""
        return True

    def reserved_nodes(self, graph) -> dict[int, str]:
        """Nodes of a DataflowGraph the backend computes better than any fusion of
        ours can (a library kernel), each with the reason; no pass fuses them."""
        return {}

    def leave_unfused(self, graph, root: int, members: set[int]) -> str | None:
        """Why instruction fusion's group `members`, grown from `root`, is better
        left to the backend's own kernels, or None to fuse it."""
        return None

    def fuse_alone(self, graph, root: int) -> str | None:
        """Why node `root`, which no producer joins, is better as a fusion of its own
        than as the backend's plain op, or None to leave it plain."""
        return None

    def tree_reduction_window(self, op) -> int | None:
        """The window XLA splits this reduce into partial reductions with before its
        fusion (tree_reductions.py), or None where it does not."""
        return None

    def import_problems(self, fusions: list, probe: bool = True) -> dict[int, str]:
        """Index into `fusions` -> why XLA's import, or the simplifier it runs first,
        breaks that fusion: the import folds ops inside fusion regions (xla_import.py;
        asked only with `probe`, as XLA refuses what it breaks with an error), the
        simplifier takes a binary fusion for a binary op and aborts
        (reversed_binary_problems). The pass manager undoes these fusions;
        check_backend refuses them."""
        problems = reversed_binary_problems(fusions)
        return {**problems, **folded_fusions(fusions)} if probe else problems

    def xla_passes_off(self, fusions: list) -> tuple[str, ...]:
        """The XLA passes to switch off when compiling a module with these fusions
        (all_fusions; see RESHAPE_MOVER)."""
        if any(map(_elementwise_to_xla, fusions)):
            return (RESHAPE_MOVER,)
        return ()


def reversed_binary_problems(fusions: list) -> dict[int, str]:
    """XLA's simplifier rewrites reverse(binary(x, splat)) as binary(reverse(x), splat),
    and counts a fusion of elementwise ops with two operands as a binary op: it
    rebuilds a binary instruction with the opcode `fusion` and aborts ("Invalid binary
    instruction opcode fusion"; fuzz hlo-opt 453, 917, 1160). Which operand it finds a
    splat we cannot tell: a constant passed through a call, but also an argmin over a
    unit axis that its constant folder makes 0. So such a fusion is undone wherever a
    reverse reads it, after XLA inlines calls (read through func.call and return)."""
    binary = [k for k, f in enumerate(fusions) if len(f.operands) == 2 and len(f.results) == 1
              and all(opinfo.name(op) in HLO_ELEMENTWISE for op in opinfo.fusion_body(f))]
    if not binary:
        return {}
    module = fusions[0].operation
    while module.parent is not None:
        module = module.parent
    functions, calls = {}, {}
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            functions[op.attributes["sym_name"].value] = op

    def visit(op):
        if op.name == "func.call":
            calls.setdefault(op.attributes["callee"].value, []).append(op)
        return ir.WalkResult.ADVANCE
    module.walk(visit)
    return {k: "two operands, read by a reverse: XLA's simplifier takes the fusion for a "
               "binary op when it moves the reverse past it (aborts)"
            for k in binary if _reaches_reverse(fusions[k].results[0], functions, calls)}


def _reaches_reverse(value: ir.Value, functions: dict, calls: dict) -> bool:
    """Whether a stablehlo.reverse reads `value` once XLA has inlined every call."""
    todo, seen = [value], set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.owner.operation
            name = user.name
            if name == "stablehlo.reverse":
                return True
            if name == "func.call":
                callee = functions.get(user.attributes["callee"].value)
                if callee is not None:
                    todo.append(callee.regions[0].blocks[0].arguments[use.operand_number])
            elif name == "func.return":
                for call in calls.get(user.parent.attributes["sym_name"].value, []):
                    todo.append(call.results[use.operand_number])
    return False


def single_root_op(fusion):
    """The op whose results are exactly the fusion's results, in order, or None."""
    roots = opinfo.fusion_roots(fusion)
    owner = roots[0].owner if roots else None
    if owner is None or isinstance(owner, ir.Block):
        return None
    if list(owner.operation.results) != roots:
        return None
    return owner


def reduce_root(op):
    """The reduce that `op` is, or whose results are exactly the fusion `op`'s."""
    if opinfo.name(op) == opinfo.FUSION:
        op = single_root_op(op)
    return op if op is not None and opinfo.name(op) == opinfo.REDUCE else None


def fusion_problem(fusion, backend: Backend, memo: dict | None = None) -> str | None:
    """Why `backend` cannot compile this mhlo.fusion, or None. `memo`: what the checks
    of one module learn while it does not change (shared_value_problem's CSE keys,
    lacks_layouts per block: a loop nest's analysis for each fusion in it)."""
    memo = {} if memo is None else memo
    op = fusion.operation
    kind = str(op.attributes["fusion_kind"]) if "fusion_kind" in op.attributes else "none"
    kind = kind.removeprefix("#mhlo<fusion_kind ").removesuffix(">")
    if kind not in backend.kinds:
        return f"fusion kind {kind} is not supported on {backend.name}"
    if len(op.results) > 1 and not backend.multi_output:
        if reduce_root(fusion) is None:
            return (f"{len(op.results)}-output fusion: {backend.name} compiles multi-output "
                    f"fusions only as one variadic reduce")
        reason = unread_outputs_problem(len(op.results),
                                        sum(not opinfo.is_read(r) for r in op.results))
        if reason:
            return reason
    if kind == "kInput" and not any(opinfo.name(v.owner) == opinfo.REDUCE
                                    for v in opinfo.fusion_roots(fusion)):
        return "kInput fusion without a reduce root"
    body = op.regions[0].blocks[0]
    fused = opinfo.fusion_body(fusion)
    size = len(fused)
    if backend.max_fused_ops is not None and size > backend.max_fused_ops:
        return f"{size} fused ops exceed XLA {backend.name}'s bound of {backend.max_fused_ops}"
    if not backend.layout_sensitive_ops:
        reason = shared_value_problem(*body_producers(fusion, fused), memo)
        if reason:
            return reason
    region = False
    if in_region(fusion):
        key = ("lacks layouts", fusion.operation.block)
        if key not in memo:
            memo[key] = backend.lacks_layouts(fusion.operation.block)
        region = memo[key]
    parameters = set(body.arguments)
    for inner in fused:
        name = opinfo.name(inner)
        reason = backend.op_problem(inner)
        if reason is None and region:
            reason = opinfo.region_problem(inner)
        if reason is None and not backend.layout_sensitive_ops and (
                region or name == "stablehlo.select"):
            outside = [v in parameters for v in inner.operation.operands]
            reason = select_problem(inner, outside) or (
                region_read_problem(inner, outside) if region else None)
        if reason is None and name in ("stablehlo.and", "stablehlo.or"):
            reason = bitwise_of_narrowing_problem(inner, [
                None if v in parameters else v.owner for v in inner.operation.operands])
        if reason is not None or name == opinfo.FUSION:
            return f"fused op not allowed: {reason or 'nested fusion'}"
        if (name == opinfo.REDUCE and not backend.reduce_inside_loop
                and any(opinfo.name(u.owner) != "stablehlo.return"
                        for r in inner.operation.results for u in r.uses)):
            return f"a reduce feeding other fused ops is not supported on {backend.name}"
    return None


def all_fusions(module: ir.Module) -> list:
    """Every mhlo.fusion in the module, nested ones included."""
    found = []

    def visit(op):
        if op.name == opinfo.FUSION:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


# XLA passes that must not run on a module our passes fused: XLA's reshape-mover sinks
# a reshape or transpose through any mhlo.fusion it takes for elementwise (one of
# elementwise ops only), changing the fusion's shape but not its fused computation,
# which XLA's verifier then rejects. Whether it will is not decidable here: XLA inlines
# calls and simplifies first, turning a function argument or a unit-dim broadcast into
# the reshape it sinks. So it is off for every module holding such a fusion; with XLA's
# fusion off it has little left to enable anyway.
RESHAPE_MOVER = "reshape-mover"


def _elementwise_to_xla(fusion) -> bool:
    """Whether XLA may take the fusion for elementwise once its simplifier has run
    inside it: that removes a shape op whose result has its operand's shape (a slice
    [0:1:2] of a unit dim; fuzzer, hlo-opt seed 218), so such an op may not count;
    nor an iota along a unit dim, which XLA's import folds to zeros (linspace of two
    points: the reshape-mover made its fusion a scalar one, and XLA's verifier
    refused it)."""
    return not any(opinfo.moves_data(op) and not _keeps_shape(op) and not _unit_iota(op)
                   for op in opinfo.fusion_body(fusion))


def _unit_iota(op) -> bool:
    operation = op.operation
    return (operation.name == "stablehlo.iota" and operation.results[0].type.shape[
        ir.IntegerAttr(operation.attributes["iota_dimension"]).value] == 1)


def _keeps_shape(op) -> bool:
    operation = op.operation
    return bool(len(operation.operands)) and (
        operation.operands[0].type.shape == operation.results[0].type.shape)

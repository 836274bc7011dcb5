"""Eager mode: outside a trace, each primitive runs as its own compiled executable.

`tnp.sin(np.ones(3))` returns a jax.Array as in JAX. Executables are cached by
(primitive, operand types, params), so a loop of eager ops compiles once.
"""
from __future__ import annotations

from . import runtime
from .core import GraphBuilder, bind, tracing
from .ir import Literal
from .lowering import lower_graph

_executables: dict = {}


def run_eagerly(prim, operands, in_types, params, out_types) -> list:
    in_types = tuple(t.strong() for t in in_types)
    key = (prim, in_types, tuple(params.items()))
    exe = _executables.get(key)
    if exe is None:
        builder = GraphBuilder(prim.name)
        with tracing(builder):
            outs = bind(prim, [builder.new_input(t) for t in in_types], params)
        graph = builder.build(outs if prim.multiple_results else [outs])
        exe = runtime.compile(lower_graph(graph, locations=False),
                              [(t.shape, t.dtype, t.weak) for t in out_types])
        _executables[key] = exe
    buffers = [runtime.as_buffer(x.value if isinstance(x, Literal) else x, t.dtype, exe.device)
               for x, t in zip(operands, in_types)]
    return exe(buffers)

"""Eager mode: the evaluation trace at the bottom of every trace stack.

Outside any other trace, bind() lands here and each primitive runs as its own
compiled executable: `tnp.sin(np.ones(3))` returns a jax.Array as in JAX.
Executables are cached by (primitive, operand types, params), so a loop of eager
ops compiles once; threads that miss together compile once.
"""
from __future__ import annotations

import threading

from . import core, runtime
from .core import bind, result_types, staging, type_of
from .ir import Literal
from .lowering import lower_graph

_executables: dict = {}
_compile_lock = threading.Lock()


class EvalTrace(core.Trace):
    dynamic = True

    def process_primitive(self, prim, operands, params):
        in_types = [type_of(x) for x in operands]
        return run_eagerly(prim, operands, in_types, params,
                           result_types(prim, in_types, params))

    def lift(self, x, dtype, weak):
        return runtime.to_device(core.host_value(x, dtype), runtime.device(), weak)


def run_eagerly(prim, operands, in_types, params, out_types) -> list:
    # the result's weak type is compiled into the executable: part of the key
    key = (prim, tuple(in_types), tuple(t.weak for t in in_types), tuple(params.items()))
    exe = _executables.get(key)
    if exe is None:
        exe = _compile(key, prim, in_types, params, out_types)
    buffers = [runtime.as_buffer(x.value if isinstance(x, Literal) else x, t.dtype, exe.device)
               for x, t in zip(operands, in_types)]
    return exe(buffers)


def _compile(key, prim, in_types, params, out_types):
    with _compile_lock:
        exe = _executables.get(key)
        if exe is None:
            with staging(prim.name) as trace:
                outs = bind(prim, [trace.new_input(t.strong()) for t in in_types], params)
                graph = trace.build(outs if prim.multiple_results else [outs])
            text = lower_graph(graph, locations=False, platform=runtime.platform())
            exe = runtime.compile(text, [(t.shape, t.dtype, t.weak) for t in out_types])
            _executables[key] = exe
    return exe


core.install_evaluation_trace(EvalTrace())

"""The IR verifier: every value defined once before use, every equation's output types
equal to what its primitive's shape rule says. Tests run it after every transform."""
from __future__ import annotations

from .core import shape_rules
from .ir import Graph, Literal


class VerificationError(ValueError):
    pass


def verify(graph: Graph) -> Graph:
    """Raise VerificationError at the first ill-typed or ill-ordered equation."""
    if not isinstance(graph, Graph):
        raise TypeError(f"verify takes a Graph (from tracehlo.make_ir or tracehlo.parse_ir), "
                        f"got {type(graph).__name__}"
                        + ("; parse IR text with tracehlo.parse_ir first"
                           if isinstance(graph, str) else ""))
    defined = set()

    def define(var, where):
        if var.id in defined:
            raise VerificationError(f"@{graph.name}: {var!r} is defined twice ({where})")
        defined.add(var.id)

    def use(atom, where):
        if not isinstance(atom, Literal) and atom.id not in defined:
            raise VerificationError(f"@{graph.name}: {atom!r} is used before it is defined "
                                    f"({where})")

    for var in graph.inputs:
        define(var, "input")
    for var, value in graph.constants:
        if tuple(value.shape) != var.type.shape or value.dtype != var.type.dtype:
            raise VerificationError(f"@{graph.name}: constant {var!r} holds "
                                    f"{value.dtype}{list(value.shape)}, typed {var.type}")
        define(var, "constant")
    for n, eqn in enumerate(graph.eqns):
        where = f"equation {n}: {eqn.prim.name}"
        for atom in eqn.inputs:
            use(atom, where)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):  # cond's branches
                if isinstance(sub, Graph):
                    verify(sub)
        try:
            expected = shape_rules[eqn.prim](*[a.type for a in eqn.inputs], **eqn.params)
        except (TypeError, ValueError) as e:
            raise VerificationError(f"@{graph.name}: {where}: {e}") from None
        expected = expected if eqn.prim.multiple_results else [expected]
        got = [v.type for v in eqn.outputs]
        if list(expected) != got:
            raise VerificationError(
                f"@{graph.name}: {where} produces {', '.join(map(str, expected))} but its "
                f"outputs are typed {', '.join(map(str, got))}")
        for var in eqn.outputs:
            define(var, where)
    for atom in graph.outputs:
        use(atom, "return")
    return graph

"""Parse the printed IR back into a Graph: print(parse(print(g))) == print(g).

JAX has no jaxpr parser; with one, IR tests can start from text and passes can be
run on a file.
"""
from __future__ import annotations

import re

import numpy as np

from . import dtypes
from .core import primitives
from .ir import ArrayType, Eqn, Graph, Literal, Location, Var

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<var>%\d+)
  | (?P<sym>@[\w.$-]+)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<num>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+|inf\b|nan\b))
  | (?P<ident>[A-Za-z_][\w]*)
  | (?P<arrow>->)
  | (?P<punct>[()\[\]{},:=<>])
""", re.VERBOSE)


class IRParseError(ValueError):
    pass


_MAX_DIM = 2**63 - 1  # StableHLO's dimension sizes are int64


def _tokenize(text):
    tokens, pos = [], 0
    line = 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise IRParseError(f"line {line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind != "ws":
            tokens.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    tokens.append(("eof", "", line))
    return tokens


class _Parser:
    def __init__(self, text):
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self, offset=0):
        return self.tokens[self.pos + offset]

    def next(self):
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def expect(self, value):
        kind, text, line = self.next()
        if text != value:
            raise IRParseError(f"line {line}: expected {value!r}, got {text!r}")
        return text

    def accept(self, value) -> bool:
        if self.peek()[1] == value:
            self.pos += 1
            return True
        return False

    def error(self, what):
        kind, text, line = self.peek()
        return IRParseError(f"line {line}: expected {what}, got {text!r}")

    # -- types and values
    def type(self) -> ArrayType:
        kind, name, line = self.next()
        if name not in dtypes.FROM_SHORT_NAME:
            raise IRParseError(f"line {line}: unknown dtype {name!r}")
        self.expect("[")
        dims = []
        while not self.accept("]"):
            kind, text, line = self.next()
            if kind != "num" or not text.isdigit():
                raise IRParseError(f"line {line}: expected a dimension size, got {text!r}")
            if int(text) > _MAX_DIM:
                raise IRParseError(f"line {line}: dimension {text} is larger than the "
                                   "largest int64")
            dims.append(int(text))
            self.accept(",")
        return ArrayType(tuple(dims), dtypes.FROM_SHORT_NAME[name])

    def scalar_text(self):
        kind, text, line = self.next()
        if kind == "num" or text in ("true", "false"):
            return text
        if text == "(":  # complex: (re, im)
            re_, _, im = self.scalar_text(), self.expect(","), self.scalar_text()
            self.expect(")")
            return complex(float(re_), float(im))
        raise IRParseError(f"line {line}: expected a number, got {text!r}")

    @staticmethod
    def scalar_value(text, dtype):
        if isinstance(text, complex):
            return np.asarray(text, dtype)
        if text in ("true", "false"):
            return np.asarray(text == "true", dtype)
        return np.asarray(float(text) if dtypes.is_inexact(dtype) else int(text), dtype)

    def constant(self, t: ArrayType) -> np.ndarray:
        if self.accept("dense"):
            self.expect("<")
            raw = self.next()[1].strip('"')
            self.expect(">")
            data = bytes.fromhex(raw[2:])
            return np.frombuffer(data, t.dtype.newbyteorder("<")).astype(t.dtype).reshape(t.shape)

        def nested():
            if self.accept("["):
                items = []
                while not self.accept("]"):
                    items.append(nested())
                    self.accept(",")
                return items
            return self.scalar_value(self.scalar_text(), t.dtype)
        value = nested()
        return np.asarray(value, t.dtype).reshape(t.shape)

    def param_value(self, env):
        kind, text, line = self.peek()
        if text == "func":
            return self.graph(env)
        if text == "(":
            self.next()
            items = []
            while not self.accept(")"):
                items.append(self.param_value(env))
                self.accept(",")
            return tuple(items)
        if text == "array":
            self.next(), self.expect("<")
            t = self.type()
            self.expect(",")
            value = self.constant(t)
            self.expect(">")
            return value
        self.next()
        if kind == "str":
            return text[1:-1]
        if text in ("true", "false"):
            return text == "true"
        if text == "none":
            return None
        if text in dtypes.FROM_SHORT_NAME:
            return dtypes.FROM_SHORT_NAME[text]
        if kind == "num":
            return float(text) if any(c in text for c in ".ean") else int(text)
        raise IRParseError(f"line {line}: cannot parse parameter value {text!r}")

    # -- graphs
    def var_def(self, env) -> Var:
        kind, text, line = self.next()
        if kind != "var":
            raise IRParseError(f"line {line}: expected a value name like %3, got {text!r}")
        self.expect(":")
        var = Var(int(text[1:]), self.type())
        if var.id in env:
            raise IRParseError(f"line {line}: {text} is defined twice")
        env[var.id] = var
        return var

    def operand(self, env):
        kind, text, line = self.peek()
        if kind == "var":
            self.next()
            if int(text[1:]) not in env:
                raise IRParseError(f"line {line}: {text} is used before it is defined")
            return env[int(text[1:])]
        value = self.scalar_text()
        self.expect(":")
        t = self.type()
        return Literal(self.scalar_value(value, t.dtype), t)

    def graph(self, outer_env=None) -> Graph:
        env = {}
        self.expect("func")
        name = self.next()[1][1:]
        self.expect("(")
        inputs = []
        while not self.accept(")"):
            inputs.append(self.var_def(env))
            self.accept(",")
        self.expect("->"), self.expect("(")
        while not self.accept(")"):
            self.type()
            self.accept(",")
        self.expect("{")
        constants, eqns = [], []
        while not self.accept("return"):
            outs = [self.var_def(env)]
            while self.accept(","):
                outs.append(self.var_def(env))
            self.expect("=")
            kind, prim_name, line = self.next()
            if prim_name == "constant":
                (var,) = outs
                constants.append((var, self.constant(var.type)))
                continue
            prim = primitives.get(prim_name)
            if prim is None:
                raise IRParseError(f"line {line}: unknown primitive {prim_name!r}")
            params = {}
            if self.accept("["):
                while not self.accept("]"):
                    key = self.next()[1]
                    self.expect("=")
                    params[key] = self.param_value(env)
                    self.accept(",")
            ins = []
            starts_operand = (self.peek()[0] == "var" and self.peek(1)[1] != ":") or (
                self.peek()[0] == "num" or self.peek()[1] in ("true", "false", "("))
            if starts_operand:  # `%5:` would be the next equation's result
                ins.append(self.operand(env))
                while self.accept(","):
                    ins.append(self.operand(env))
            loc = None
            if self.accept("loc"):
                self.expect("(")
                file = self.next()[1][1:-1]
                self.expect(":")
                loc = Location(file, int(self.next()[1]))
                self.expect(")")
            eqns.append(Eqn(prim, ins, params, outs, loc))
        outputs = []
        if self.peek()[1] != "}":
            outputs.append(self.operand(env))
            while self.accept(","):
                outputs.append(self.operand(env))
        self.expect("}")
        next_id = max(env, default=-1) + 1
        return Graph(name, inputs, constants, eqns, outputs, next_id)


def parse_ir(text: str) -> Graph:
    """The Graph that `text` (as printed by Graph.to_text) describes."""
    parser = _Parser(text)
    graph = parser.graph()
    if parser.peek()[0] != "eof":
        raise parser.error("end of input")
    return graph

"""Shared by the StableHLO lit tests: print the module for fn at example types."""
import tracehlo
from tracehlo.lowering import lower_graph


def print_stablehlo(fn, *args, **kwargs):
    print(lower_graph(tracehlo.make_ir(fn, **kwargs)(*args), locations=False), end="")

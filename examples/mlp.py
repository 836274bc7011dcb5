"""A small MLP and its pieces: the example `hlo-dump examples/mlp.py` shows."""
import tracehlo.numpy as tnp
import tracehlo.nn as nn

HLO_DUMP = {
    "scaled_sum": ["f32[8,4]", "f32[4]"],
    "softmax": ["f32[8,16]"],
    "mlp": ["f32[32,64]", "f32[64,128]", "f32[128]", "f32[128,10]", "f32[10]"],
}


def scaled_sum(first, second):
    return tnp.sum(first + tnp.sin(second) * 3.0)


def softmax(x):
    return nn.softmax(x, axis=-1)


def mlp(x, w1, b1, w2, b2):
    hidden = nn.relu(x @ w1 + b1)
    return nn.log_softmax(hidden @ w2 + b2)

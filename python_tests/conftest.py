import logging

import jax
import pytest

import tracehlo


def pytest_addoption(parser):
    parser.addoption("--conformance-all", action="store_true", default=False,
                     help="run the whole StableHLO conformance corpus, not the default sample")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fusion_fallback: the test provokes a fallback to XLA's fusion on purpose")


class _FallbackRecorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        message = record.getMessage()
        if "XLA rejected the fused module" in message:
            self.messages.append(message)


@pytest.fixture(autouse=True)
def no_fusion_fallback(request):
    """A fallback to XLA's fusion is a bug in the passes (issue 8): any test whose
    compile falls back fails, unless it provokes one on purpose."""
    recorder = _FallbackRecorder()
    logger = logging.getLogger("tracehlo")
    logger.addHandler(recorder)
    try:
        yield
    finally:
        logger.removeHandler(recorder)
    if recorder.messages and request.node.get_closest_marker("fusion_fallback") is None:
        pytest.fail("fell back to XLA's fusion: " + recorder.messages[0].splitlines()[0])


@pytest.fixture
def x64():
    """64-bit types on, in tracehlo and in the JAX oracle, for one test."""
    tracehlo.config.update("enable_x64", True)
    try:
        with jax.enable_x64(True):
            yield
    finally:
        tracehlo.config.update("enable_x64", False)

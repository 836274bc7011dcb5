import logging

import jax
import pytest

import tracehlo


def pytest_addoption(parser):
    parser.addoption("--conformance-all", action="store_true", default=False,
                     help="run the whole StableHLO conformance corpus, not the default sample")
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run the K-th (from 0) of N shards of the tests (parallel.py)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fusion_fallback: the test provokes a fallback to XLA's fusion on purpose")
    config.addinivalue_line(
        "markers", "slow: a corpus, random-program or whole-install run; `-m 'not slow'` "
                   "is the fast inner loop, CI runs everything")
    config.addinivalue_line(
        "markers", "one_shard: the module's tests run in one shard (--shard), as their "
                   "shared fixture must not be set up twice at once")


def pytest_collection_modifyitems(config, items):
    """--shard K/N: the tests dealt out in collection order, each to the shard with
    the fewest so far, so each shard holds about 1/N of every file; a module marked
    one_shard goes whole to one. A module-scoped fixture is set up in each shard that
    uses it (a worker process: a second costs a second or two)."""
    if config.getoption("shard") is None:
        return
    k, n = map(int, config.getoption("shard").split("/"))
    groups: dict = {}
    for item in items:
        whole = item.get_closest_marker("one_shard") is not None
        groups.setdefault(item.module.__name__ if whole else item.nodeid, []).append(item)
    shards: list[list] = [[] for _ in range(n)]
    for group in groups.values():
        min(shards, key=len).extend(group)
    mine = {id(item) for item in shards[k]}
    config.hook.pytest_deselected(items=[item for item in items if id(item) not in mine])
    items[:] = [item for item in items if id(item) in mine]


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

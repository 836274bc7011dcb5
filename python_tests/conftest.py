import fcntl
import logging

import pytest


def pytest_addoption(parser):
    parser.addoption("--conformance-all", action="store_true", default=False,
                     help="run the whole StableHLO conformance corpus, not the default sample")
    parser.addoption("--claim-tests", default=None, metavar="FILE",
                     help="run only the tests this process claims, one at a time, from a "
                          "counter in FILE shared with other pytest processes (parallel.py)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fusion_fallback: the test provokes a fallback to XLA's fusion on purpose")
    config.addinivalue_line(
        "markers", "slow: a corpus, random-program or whole-install run; `-m 'not slow'` "
                   "is the fast inner loop, CI runs everything")
    config.addinivalue_line(
        "markers", "one_process: a module's tests so marked run in one process "
                   "(--claim-tests), as their shared fixture must not be set up twice "
                   "at once")


def pytest_runtestloop(session):
    """--claim-tests FILE: pytest's own loop, except that each test is first claimed
    from a counter that every process of the run increments under a file lock, so the
    processes share out the tests as they go and finish together. A module's tests
    marked one_process (all of them, when the module is) are claimed together; other
    module-scoped fixtures are set up in each process that needs them (a worker
    process: a second or two)."""
    path = session.config.getoption("claim_tests")
    if path is None or session.config.option.collectonly or session.testsfailed:
        return None  # pytest's own loop (which reports collection errors)
    groups: dict = {}
    for item in session.items:
        whole = item.get_closest_marker("one_process") is not None
        groups.setdefault(item.module.__name__ if whole else item.nodeid, []).append(item)
    groups = list(groups.values())
    queue = (item for index in _claims(path, len(groups)) for item in groups[index])
    item = next(queue, None)
    while item is not None:
        nextitem = next(queue, None)  # claimed before this test's teardown, which needs it
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        item = nextitem
    return True


def _claims(path, count):
    """The indices below `count` this process claims from the counter in `path`."""
    while True:
        with open(path, "a+") as counter:
            fcntl.flock(counter, fcntl.LOCK_EX)
            counter.seek(0)
            index = int(counter.read() or 0)
            counter.seek(0)
            counter.truncate()
            counter.write(str(index + 1))
        if index >= count:
            return
        yield index


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
    """64-bit types on, in tracehlo and in the JAX oracle, for one test. (jax and
    tracehlo imported here: test_parallel's pytest runs of this file import neither.)"""
    import jax
    import tracehlo
    tracehlo.config.update("enable_x64", True)
    try:
        with jax.enable_x64(True):
            yield
    finally:
        tracehlo.config.update("enable_x64", False)

def pytest_addoption(parser):
    parser.addoption("--conformance-all", action="store_true", default=False,
                     help="run the whole StableHLO conformance corpus, not the default sample")

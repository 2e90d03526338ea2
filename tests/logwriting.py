from tests.kit.logwriting import *  # noqa: F403  (moved to tests/kit/)

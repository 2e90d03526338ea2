from tests.kit.fakehost import *  # noqa: F403  (moved to tests/kit/)

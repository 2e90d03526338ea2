from tests.kit.foldkit import *  # noqa: F403  (moved to tests/kit/)

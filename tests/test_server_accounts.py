"""The soak's server accounts (``benchmarks/server_accounts/sitecustomize.py``) count
objects from their own thread while the event loop runs, so they see objects the loop
is still making; reading one must not crash the server they measure."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ACCOUNTS_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "server_accounts"


def test_a_tuple_still_being_filled_is_counted_without_crashing_the_server() -> None:
    # ``tuple(generator)`` allocates its tuple, tracked and with empty slots, then runs
    # the generator: the census's ``gc.get_objects()`` lists it meanwhile. Run in a
    # child process: reading an empty slot is a segmentation fault, not an exception.
    script = textwrap.dedent(
        """
        import gc
        import importlib.util
        import sys

        # By its path, under a name of its own: the interpreter may have imported a
        # ``sitecustomize`` of its installation at start.
        spec = importlib.util.spec_from_file_location("bench_accounts", sys.argv[1])
        accounts = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(accounts)
        _shape = accounts._shape

        seen = []

        def items():
            for n in range(4):
                if n == 1:
                    for obj in gc.get_objects():
                        if type(obj) is tuple and len(obj) == 10 and obj is not seen:
                            if len(gc.get_referents(obj)) < 10:  # empty slots
                                seen.append(_shape(obj))
                yield str(n)

        built = tuple(items())
        assert built == ("0", "1", "2", "3"), built
        print(seen)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(ACCOUNTS_DIR / "sitecustomize.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    # The tuple being filled was found (else this test tests nothing) and counted by
    # its length and the one item it held then.
    assert "'tuple9+(str)'" in done.stdout or "'tuple9+()'" in done.stdout, done.stdout

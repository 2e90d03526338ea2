"""Builders and fakes the tests share (test modules never import each other).

- ``foldkit``: LogEvents and team snapshots for the fold and timeline tests;
- ``logwriting``: session logs written the host's way (zstd frames, plain lines);
- ``fakehost``: a host whose services live in memory, each breakable on purpose;
- ``teams``: small real-format teams on disk (two members; every text hostile);
- ``chromium``: Debian's Chromium, its flags and a uvicorn server on loopback (no pytest:
  the screenshot scripts and the panel benchmark import it too);
- ``browser``: the Chromium fixtures and a watched page (errors, dialogs, requests);
- ``start_root``: a small sessions root for the start page (teams, single sessions);
- ``benchmarks``: a script of ``benchmarks/`` run as a reader would run it.
"""

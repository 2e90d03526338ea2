"""Reading session logs: project keys, zstd frames, the incremental reader, the
directory-backed ``sessionPersistence``, the two-channel lane read and the dump.

Everything here is read-only: files are opened ``'rb'`` and nothing is ever created.
"""

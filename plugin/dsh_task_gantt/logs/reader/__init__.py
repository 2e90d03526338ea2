"""An incremental, read-only reader of one session log file.

``session.v4.jsonl.zstd`` is many independent zstd frames appended (one per append
batch); ``session.v4.jsonl`` is plain JSON lines. Either may end in a write that is
still in progress. :class:`LogReader` remembers how far it got (file identity, the
byte offset after the last complete frame or line, counts, the header and a sparse
list of checkpoints) and :meth:`LogReader.read_new` decodes only what was appended
since. It keeps no parsed events: a caller that needs older events asks
:meth:`LogReader.read_range`, which decodes from the nearest checkpoint.

One module per concept: ``zstd_batches`` (complete frames, batched and
decompressed), ``ahead`` (the decompress-ahead thread), ``units`` (bytes to units of
complete lines), ``skip_rules`` (which lines may stay unparsed), ``line_decoder``
(lines to the header and events), ``log_reader`` (identity, offset, checkpoints),
``raw_scan`` (every raw line, for the dump and the header).

Decisions (the "why" of the edge cases):

- A torn tail (an incomplete last zstd frame, or a plain line without its ``\\n``)
  is never decoded; it is reported in ``torn_tail_bytes`` and picked up next time.
- In a ``.zstd`` log a complete frame is a finished write. Its last line may still
  lack a ``\\n``: the text is then a line of its own when it parses as a JSON
  object (which cannot be the prefix of a longer valid line), otherwise it is carried into
  the next frame (a line split across frames). This depends only on the frames'
  content, never on when the file was read, so incremental reads equal a full read.
- Blank lines carry nothing and are passed over silently; any other line that is not
  a JSON object with a string ``type`` is skipped and counted in ``bad_lines``.
- Bytes that can never become a frame (bad magic, a reserved block type, a frame
  that does not decompress) stop the read there: ``garbage`` says why, events
  before it are kept, nothing after it is guessed at.
- A file that shrank, was replaced (new ``st_dev``/``st_ino``) or whose bytes before
  the remembered offset changed is read again from the start (``restarted``).
- Errors opening or reading the file never raise: ``ReadBatch.error`` holds a short
  reason without the file system path.
- Speed of a cold read (most of a log's bytes are lines nobody folds the data of):
  ``read_new(runs=True)`` hands the lines ``skip_types`` lets pass unparsed over as one
  :class:`~dsh_task_gantt.events.EventRun` (their seqs, latest time, latest seq of the
  ``run_marks`` types) instead of one event each — same indices, counts, offsets and
  checkpoints; the default stays one event per line. A big read decompresses ahead
  in a second thread, frames batched into one GIL-free call, while this one parses.

What to skip is the caller's choice (the fold says what it never reads:
``dsh_task_gantt.fold.UNREAD_DATA``); the reader keeps no list of its own.
"""

from __future__ import annotations

from dsh_task_gantt.logs.reader.log_reader import Checkpoint, LogReader, ReadBatch, ReaderState
from dsh_task_gantt.logs.reader.raw_scan import RawScan, read_header
from dsh_task_gantt.logs.reader.skip_rules import SkipTypes
from dsh_task_gantt.logs.reader.units import is_zstd_path
from dsh_task_gantt.logs.reader.zstd_batches import MAX_FRAME_BYTES, decompress_frame

__all__ = [
    "MAX_FRAME_BYTES",
    "Checkpoint",
    "LogReader",
    "RawScan",
    "ReadBatch",
    "ReaderState",
    "SkipTypes",
    "decompress_frame",
    "is_zstd_path",
    "read_header",
]

"""Team messages: pair ``queued`` ↔ ``delivered`` by message id (pure).

Duplicate queue records: the first (lowest seq) wins; duplicate deliveries: the last
wins; a queue record without a target takes the delivery's. Neither position nor
time is used to pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .records import DeliveredRec, QueuedRec


@dataclass(frozen=True, slots=True)
class PairedMessage:
    id: str
    #: ``None`` for a delivery without its queue record.
    queued: QueuedRec | None
    delivered: DeliveredRec | None
    target_id: str | None

    @property
    def time(self) -> int | None:
        """Queued time; the delivery's time only when there is no queue record."""
        if self.queued is not None:
            return self.queued.time
        return self.delivered.time if self.delivered is not None else None


@dataclass(frozen=True, slots=True)
class MessagePairing:
    messages: tuple[PairedMessage, ...]
    duplicate_queued: int
    duplicate_delivered: int


def pair_messages(
    queued: Iterable[tuple[int, QueuedRec]], delivered: Iterable[tuple[int, DeliveredRec]]
) -> MessagePairing:
    first_queued: dict[str, tuple[int, QueuedRec]] = {}
    last_delivered: dict[str, tuple[int, DeliveredRec]] = {}
    dup_q = dup_d = 0
    for seq, rec in queued:
        held = first_queued.get(rec.id)
        if held is not None:
            dup_q += 1
        if held is None or seq < held[0]:
            first_queued[rec.id] = (seq, rec)
    for seq, drec in delivered:
        dheld = last_delivered.get(drec.id)
        if dheld is not None:
            dup_d += 1
        if dheld is None or seq > dheld[0]:
            last_delivered[drec.id] = (seq, drec)
    messages: list[PairedMessage] = []
    for message_id in sorted(first_queued.keys() | last_delivered.keys()):
        q = first_queued.get(message_id)
        d = last_delivered.get(message_id)
        qrec = q[1] if q else None
        drec_ = d[1] if d else None
        target = qrec.target_id if qrec and qrec.target_id else None
        if target is None and drec_ is not None:
            target = drec_.target_id
        messages.append(PairedMessage(message_id, qrec, drec_, target))
    return MessagePairing(tuple(messages), dup_q, dup_d)

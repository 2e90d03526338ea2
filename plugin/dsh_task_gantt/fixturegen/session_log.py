"""One session log being written: seq, its own clock, turn and step state, frames."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_task_gantt.fixturegen.seeded import json_args, lognormal, new_uuid
from dsh_task_gantt.fixturegen.writer import Event, SessionLogWriter

if TYPE_CHECKING:
    from dsh_task_gantt.fixturegen.sim import Sim

REASON_KINDS = ("completed", "aborted", "blocked", "error", "max-tokens", "interrupted", "forked")
_REASON_WEIGHTS = (80, 4, 3, 3, 3, 5, 2)
_FILLER_TOOLS = ("read_file", "bash", "grep", "edit_file", "team_task_list", "team_task_get")


class Log:
    """One session log being written: seq, its own clock, turn state, frame batching."""

    def __init__(self, sim: Sim, writer: SessionLogWriter, member_id: str, t: int) -> None:
        self.sim = sim
        self.writer = writer
        self.member_id = member_id
        self.t = t
        self.next_seq = 0
        self.last_time: int | None = None
        self.own_first_time: int | None = None
        self.inherited = 0
        self.pending: list[Event] = []
        self.history: list[Event] | None = None  # kept on the lead until forks are done
        self.batch_target = sim.rng.randint(*sim.scale.batch)
        self.turn = 0
        self.step = 0
        self.open_turn: int | None = None
        self.open_step: int | None = None
        self.turn_count = 0
        self.closed_turn_count = 0
        self.human_prompt_ids: list[str] = []
        self.injected: Counter[str] = Counter()
        self.received: list[str] = []
        # Token use (its own random source, so the rest of the log is as before): the
        # context the model re-reads from cache grows through the session.
        self.usage_rng = random.Random(f"usage:{member_id}")
        self.context_tokens = self.usage_rng.randint(3_000, 12_000)
        #: DSH's writer puts ``usage`` after the message; other writers put it first.
        self.usage_first = self.usage_rng.random() < 0.3
        self.messages_written = 0

    # -- writing ---------------------------------------------------------------
    def advance(self, lo: int, hi: int) -> int:
        self.t += self.sim.dt(lo, hi)
        return self.t

    def emit(self, etype: str, data: Any, dt: tuple[int, int] = (3, 60)) -> Event:
        self.advance(*dt)
        ceiling = self.sim.ceiling
        if ceiling is not None:  # live ticks stay at or before the caller's "now"...
            self.t = min(self.t, ceiling)
        if self.last_time is not None:  # ...but a log's times never go backwards
            self.t = max(self.t, self.last_time)
        event = Event(etype, self.next_seq, self.t, data)
        self.next_seq += 1
        self.last_time = self.t
        if self.own_first_time is None:
            self.own_first_time = self.t
        self.pending.append(event)
        if self.history is not None:
            self.history.append(event)
        if len(self.pending) >= self.batch_target:
            self.flush()
        return event

    def copy_prefix(self, events: list[Event]) -> None:
        """A forked child's first events: the parent's, same seq/time/data."""
        for i in range(0, len(events), 15):
            self.writer.append(events[i : i + 15])
        self.next_seq = len(events)
        self.inherited = len(events)
        if events:
            self.last_time = events[-1].time

    def flush(self) -> None:
        if self.pending:
            self.writer.append(self.pending)
            self.pending = []
        self.batch_target = self.sim.rng.randint(*self.sim.scale.batch)

    # -- agent activity ----------------------------------------------------------
    def user_message(
        self,
        kind: str,
        text: str,
        *,
        msg_id: str | None = None,
        extra_source: dict[str, Any] | None = None,
    ) -> Event:
        mid = msg_id or new_uuid(self.sim.rng)
        source: dict[str, Any] = {"kind": kind}
        if extra_source:
            source.update(extra_source)
        data = {
            "id": mid,
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": source,
        }
        event = self.emit("user/message", data, (200, 3000))
        if kind == "user":
            if mid not in self.human_prompt_ids:
                self.human_prompt_ids.append(mid)
        else:
            self.injected[kind] += 1
        return event

    def begin_turn(self) -> None:
        self.turn += 1
        self.step = 0
        self.open_turn = self.turn
        self.turn_count += 1
        self.emit("turn/start", {"turn": self.turn}, (5, 80))

    def enter_turn(self) -> bool:
        """Be inside a turn with no open step; True when a new turn was opened."""
        if self.open_step is not None:
            self.end_step()
        if self.open_turn is not None:
            return False
        self.begin_turn()
        return True

    def end_turn(self, reason: str = "completed") -> None:
        if self.open_step is not None:
            self.end_step()
        self.emit("turn/end", {"turn": self.turn, "reason": {"kind": reason}}, (5, 80))
        self.open_turn = None
        self.closed_turn_count += 1

    def begin_step(self) -> None:
        self.step += 1
        self.open_step = self.step
        self.emit("step/start", {"turn": self.turn, "step": self.step}, (5, 50))
        if self.sim.rng.random() < 0.3:
            self.emit(
                "request/header",
                {"turn": self.turn, "step": self.step, "model": "deepseek-chat", "attempt": 1},
                (1, 5),
            )

    def end_step(self) -> None:
        self.emit("step/end", {"turn": self.turn, "step": self.step}, (5, 40))
        self.open_step = None

    def assistant(self, text: str | None = None) -> None:
        sim = self.sim
        if text is None:
            text = sim.text.take(lognormal(sim.rng, sim.scale.text_median, 0.7, 20, 60_000))
        piece = 320
        stream: list[dict[str, Any]] = [{"type": "text-start"}]
        stream += [
            {"type": "text-delta", "delta": text[i : i + piece]} for i in range(0, len(text), piece)
        ]
        stream.append({"type": "text-end"})
        usage = self.step_usage(text)
        # Most steps log a usage chunk; a few only the message's usage, a few neither;
        # the lead's sixth message is interrupted (no chunk, its usage so far).
        roll = self.usage_rng.random()
        interrupted = self.messages_written == 5 and getattr(sim, "lead", None) is self
        self.messages_written += 1
        if roll < 0.9 and not interrupted:
            chunk = {"type": "usage", "usage": usage}
            self.emit(
                "assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk}, (1, 5)
            )
        message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        if self.usage_first:  # this writer names the model, first in the message
            message = {"source": {"provider": "deepseek", "model": "deepseek-chat"}, **message}
        data: dict[str, Any] = {"turn": self.turn, "step": self.step}
        if self.usage_first and roll < 0.96:
            data = {"usage": usage, **data}
        data["message"] = message
        data["stream"] = stream
        if not self.usage_first and roll < 0.96:
            data["usage"] = usage
        if interrupted:
            data["interrupted"] = True
        self.emit("assistant/message", data, (800, 25_000))

    def step_usage(self, text: str) -> dict[str, int]:
        """One model call's ``TokenUsage`` (HOST §8: disjoint counts): the context so
        far is read from cache, what this step added is written to it."""
        rng = self.usage_rng
        new = rng.randint(200, 6_000)
        output = max(1, len(text) // 4)
        usage = {
            "inputTokens": rng.randint(5, 400),
            "outputTokens": output,
            "cacheReadTokens": self.context_tokens,
            "cacheWriteTokens": new,
        }
        if rng.random() < 0.3:
            usage["reasoningTokens"] = rng.randint(0, output)
        self.context_tokens += new + output
        return usage

    def tool(
        self,
        name: str,
        args: dict[str, Any],
        on_call: Callable[[Event], None] | None = None,
        result_text: str | None = None,
    ) -> Event:
        sim = self.sim
        call_id = f"call_{sim.rng.getrandbits(64):016x}"
        call = self.emit(
            "tool/call",
            {
                "turn": self.turn,
                "step": self.step,
                "callId": call_id,
                "name": name,
                "arguments": json_args(args),
            },
            (5, 40),
        )
        if on_call is not None:
            on_call(call)
        if result_text is None:
            result_text = sim.text.take(
                lognormal(sim.rng, sim.scale.tool_result_median, 0.9, 10, 80_000)
            )
        self.emit(
            "tool/result",
            {
                "turn": self.turn,
                "step": self.step,
                "message": {
                    "role": "tool",
                    "toolCallId": call_id,
                    "content": [{"type": "text", "text": result_text}],
                    "source": {"kind": "tool", "callId": call_id},
                },
            },
            (50, 8000),
        )
        return call

    def work_step(self) -> None:
        """A filler step: a model call, usually one tool."""
        self.begin_step()
        self.assistant()
        if self.sim.rng.random() < 0.75:
            name = self.sim.rng.choice(_FILLER_TOOLS)
            self.tool(
                name,
                {"path": self.sim.rng.choice(self.sim.words.project.files)}
                if name in ("read_file", "edit_file")
                else {"query": "status"},
            )
        self.end_step()

    def filler_turn(self, steps: int) -> None:
        self.begin_turn()
        for _ in range(steps):
            self.work_step()
        reason = self.sim.rng.choices(REASON_KINDS, _REASON_WEIGHTS)[0]
        self.end_turn(reason)

"""A scripted fake model for real DSH: an HTTP server on loopback speaking the streaming
chat-completions protocol of DSH's DeepSeek provider, playing one short team session.

Protocol (DSH's ``llm-deepseek`` adapter, 0.1.x): ``POST <base>/chat/completions`` with
``{model, messages, stream: true, stream_options: {include_usage: true}, tools, ...}``;
the answer is server-sent events, ``data: <chunk JSON>`` each, then ``data: [DONE]``.
A chunk's ``choices[0].delta`` carries ``content`` or ``tool_calls`` (``index``, ``id``,
``function.name``, ``function.arguments``); ``finish_reason`` is ``stop`` or
``tool_calls``; a trailing chunk with empty ``choices`` carries ``usage``
(``prompt_tokens`` includes ``prompt_cache_hit_tokens``). An SSE comment line keeps a
held answer alive (DSH reads it as transport activity, not data).

Callers are told apart by their system prompt: a team member's ends with
"Your Team role is <role>; your Team name is <name>; Team id is <id>." (DSH's
``tool-agent-team``); the subagent child is known by its brief's first words. Each
agent's next step is derived from its own conversation (the tool-call ids and texts
already in it), so a repeated request gets the same answer and an extra turn gets
"Nothing new." instead of derailing the story. Steps that must follow another agent's
step are held (keep-alive comments) until the other's tool result has been seen.

The story (:data:`STORY` says who did what, the test checks the timeline against it):
the human asks the lead for a report; the lead creates task A ("Collect the data") and
task B ("Write the report", blocked by A), asks a subagent child to count the input
files, spawns alice (fresh) and bob (fork); alice claims A, the lead reassigns A to bob
and tells both (followup_task to bob, send_message to alice); bob completes A and tells
the lead; the lead wakes alice for B; alice claims B, releases it and tells the lead;
the lead assigns B to bob and wakes him; bob completes B and says so; the lead answers.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: How long a held step waits for the step it follows before the script gives up.
HOLD_LIMIT_S = 120.0
#: Keep-alive interval while a step is held (well under DSH's stream idle timeout).
KEEPALIVE_S = 1.0

HUMAN_PROMPT = (
    "Use Agent Teams: have two teammates collect the data and write the report, "
    "and have a subagent count the input files first."
)
CHILD_MARK = "Count the input files"
CHILD_PROMPT = f"{CHILD_MARK} in this workspace and answer with the number only."
CHILD_ANSWER = "3"
FINAL_ANSWER = "The report is written: bob wrote it from the data he collected."

_ROLE = re.compile(r"Your Team role is (lead|teammate); your Team name is ([^;\s]+);")
_TASK_ID = re.compile(r'"id"\s*:\s*"([^"]+)"')


def alice_brief(task_a: str) -> str:
    return (
        f"You are alice, the data collector. Claim task {task_a} (revision 1) "
        "and start collecting the data."
    )


def bob_brief(task_a: str) -> str:
    return (
        "You are bob, the writer. Say you are ready, then wait: the lead will hand "
        f"you task {task_a} and then the report."
    )


def msg_a_to_bob(task_a: str) -> str:
    return f"Task {task_a} is yours now (revision 3): finish collecting and complete it."


def msg_a_to_alice(task_a: str) -> str:
    return f"I moved task {task_a} to bob; the report task will be yours once it is done."


MSG_BOB_DONE_A = "Task A is done: the data is in data/."


def msg_b_to_alice(task_b: str) -> str:
    return f"Task {task_b} is ready now: claim it (revision 1)."


MSG_ALICE_RELEASED = "I released the report task: bob has the data, he should write it."


def msg_b_to_bob(task_b: str) -> str:
    return f"Task {task_b} is yours (revision 4): write the report and complete it."


MSG_BOB_DONE_B = "The report is written (report.md)."
ALICE_DONE = "Released the report task."
BOB_DONE = "The report is written."


@dataclass(frozen=True)
class Conversation:
    """What one request says: the caller, its messages, and what is already in them."""

    caller: str
    messages: tuple[dict[str, Any], ...]

    def tool_result(self, call_id: str) -> str:
        for m in self.messages:
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
                return _text(m.get("content"))
        return ""

    def task_id(self, call_id: str) -> str:
        """The id of the task the team_task_create call ``call_id`` made."""
        found = _TASK_ID.search(self.tool_result(call_id))
        return found.group(1) if found else "unknown-task"

    def call_ids(self) -> set[str]:
        ids: set[str] = set()
        for m in self.messages:
            for call in m.get("tool_calls") or ():
                ids.add(str(call.get("id")))
        return ids

    def texts(self) -> set[str]:
        return {_text(m.get("content")) for m in self.messages if m.get("role") == "assistant"}

    def said_to_me(self) -> str:
        return "\n".join(
            _text(m.get("content")) for m in self.messages if m.get("role") in ("user", "tool")
        )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


Args = Callable[[Conversation, "Ledger"], dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """One model call of one agent: a tool call (``tool``) or a final text."""

    agent: str
    marker: str  # the tool call's id, or the text itself
    tool: str | None = None
    args: Args | None = None
    #: Markers (any agent) that must have happened first: a tool call whose result
    #: has been seen, or a final text served.
    after: tuple[str, ...] = ()
    #: Words that must have reached the agent before this step starts its turn.
    woken_by: str | None = None


@dataclass
class Ledger:
    """What the server did: every answer by agent, with the usage it reported."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    results_seen: set[str] = field(default_factory=set)
    task_ids: dict[str, str] = field(default_factory=dict)
    served: list[tuple[str, str, dict[str, int]]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    models: set[str] = field(default_factory=set)
    #: Each agent's session ids, from DSH's ``x-deepseek-harness-session-id`` header.
    sessions: dict[str, set[str]] = field(default_factory=dict)
    changed: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def usage_by_agent(self) -> dict[str, dict[str, int]]:
        """The usage reported to each agent, summed as the contract's Tokens."""
        out: dict[str, dict[str, int]] = {}
        with self.lock:
            for agent, _marker, usage in self.served:
                t = out.setdefault(
                    agent,
                    dict.fromkeys(
                        ("input", "cacheRead", "cacheWrite", "output", "reasoning", "steps"), 0
                    )
                    | {"stepsWithoutUsage": 0},
                )
                t["input"] += usage["prompt_tokens"] - usage["prompt_cache_hit_tokens"]
                t["cacheRead"] += usage["prompt_cache_hit_tokens"]
                t["output"] += usage["completion_tokens"]
                t["reasoning"] += usage["reasoning_tokens"]
                t["steps"] += 1
        return out

    def markers(self, agent: str) -> list[str]:
        with self.lock:
            return [m for a, m, _ in self.served if a == agent]


def _task(ledger: Ledger, name: str) -> str:
    return ledger.task_ids.get(name, "unknown-task")


def _story() -> tuple[Step, ...]:
    def create_b(c: Conversation, led: Ledger) -> dict[str, Any]:
        return {
            "subject": "Write the report",
            "description": "Write report.md from the collected data.",
            "blocked_by": [_task(led, "A")],
            "write_scopes": ["report.md"],
        }

    def update(task: str, rev: int, action: str, **extra: str) -> Args:
        return lambda c, led: {
            "task_id": _task(led, task),
            "expected_revision": rev,
            "action": action,
            **extra,
        }

    def send(target: str, words: Callable[[Ledger], str]) -> Args:
        return lambda c, led: {"target": target, "message": words(led)}

    return (
        # The lead's one turn.
        Step(
            "lead",
            "call_lead_1",
            "team_task_create",
            lambda c, led: {
                "subject": "Collect the data",
                "description": "Collect the input data into data/.",
                "write_scopes": ["data"],
            },
        ),
        Step("lead", "call_lead_2", "team_task_create", create_b),
        Step(
            "lead",
            "call_lead_3",
            "subagent",
            lambda c, led: {"description": "Count input files", "prompt": CHILD_PROMPT},
        ),
        Step(
            "lead",
            "call_lead_4",
            "spawn_teammate",
            lambda c, led: {
                "name": "alice",
                "description": "Collects the data",
                "prompt": alice_brief(_task(led, "A")),
                "context": "fresh",
            },
        ),
        Step(
            "lead",
            "call_lead_5",
            "spawn_teammate",
            lambda c, led: {
                "name": "bob",
                "description": "Writes the report",
                "prompt": bob_brief(_task(led, "A")),
                "context": "fork",
            },
        ),
        Step(
            "lead",
            "call_lead_6",
            "team_task_update",
            update("A", 2, "reassign", owner="bob"),
            after=("call_alice_1", "call_lead_5"),
        ),
        Step(
            "lead",
            "call_lead_7",
            "followup_task",
            send("bob", lambda led: msg_a_to_bob(_task(led, "A"))),
        ),
        Step(
            "lead",
            "call_lead_8",
            "send_message",
            send("alice", lambda led: msg_a_to_alice(_task(led, "A"))),
        ),
        Step(
            "lead",
            "call_lead_9",
            "followup_task",
            send("alice", lambda led: msg_b_to_alice(_task(led, "B"))),
            after=("call_bob_2",),
        ),
        Step(
            "lead",
            "call_lead_10",
            "team_task_update",
            update("B", 3, "reassign", owner="bob"),
            after=("call_alice_4",),
        ),
        Step(
            "lead",
            "call_lead_11",
            "followup_task",
            send("bob", lambda led: msg_b_to_bob(_task(led, "B"))),
        ),
        Step("lead", FINAL_ANSWER, after=(ALICE_DONE, BOB_DONE)),
        # The subagent child.
        Step("child", CHILD_ANSWER),
        # alice: claims A, then (woken for B) claims and releases it.
        Step("alice", "call_alice_1", "team_task_update", update("A", 1, "claim")),
        Step("alice", "Claimed task A; collecting the data."),
        Step(
            "alice",
            "call_alice_3",
            "team_task_update",
            update("B", 1, "claim"),
            woken_by="is ready now",
        ),
        Step("alice", "call_alice_4", "team_task_update", update("B", 2, "release")),
        Step("alice", "call_alice_5", "send_message", send("lead", lambda led: MSG_ALICE_RELEASED)),
        Step("alice", ALICE_DONE),
        # bob (forked): ready, then completes A, then B.
        Step("bob", "Ready for the lead's instructions."),
        Step(
            "bob",
            "call_bob_2",
            "team_task_update",
            update("A", 3, "complete"),
            woken_by="is yours now",
        ),
        Step("bob", "call_bob_3", "send_message", send("lead", lambda led: MSG_BOB_DONE_A)),
        Step("bob", "Task A completed."),
        Step(
            "bob",
            "call_bob_4",
            "team_task_update",
            update("B", 4, "complete"),
            woken_by="write the report and complete",
        ),
        Step("bob", "call_bob_5", "send_message", send("lead", lambda led: MSG_BOB_DONE_B)),
        Step("bob", BOB_DONE),
    )


STORY: tuple[Step, ...] = _story()

#: A session without a team (for a DSH that has none): the lead asks a subagent child
#: to count the input files, then answers.
SOLO_PROMPT = "Have a subagent count the input files, then tell me the number."
SOLO_ANSWER = "There are 3 input files."
SOLO_STORY: tuple[Step, ...] = (
    Step(
        "lead",
        "call_lead_1",
        "subagent",
        lambda c, led: {"description": "Count input files", "prompt": CHILD_PROMPT},
    ),
    Step("lead", SOLO_ANSWER, after=("call_lead_1",)),
    Step("child", CHILD_ANSWER),
)


def _caller(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    # The child first: DSH 0.1.1 gives a subagent of the lead a team section of its own
    # ("role is lead") while its descriptor is not yet written.
    if users and CHILD_MARK in users[0]:
        return "child"
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    found = _ROLE.search(system)
    if found:
        return found.group(2)
    # No team (a DSH without one): the agent is the lead; the title model has no tools.
    return "lead" if body.get("tools") else "other"


def _usage(ledger: Ledger, agent: str) -> dict[str, int]:
    """Distinct, deterministic counts per answer (the n-th answer overall)."""
    n = len(ledger.served)
    return {
        "prompt_tokens": 1000 + 17 * n,
        "completion_tokens": 20 + n,
        "prompt_cache_hit_tokens": 600 + 5 * n,
        "reasoning_tokens": n % 3,
    }


def _next_step(story: tuple[Step, ...], conv: Conversation) -> Step | None:
    done = conv.call_ids() | conv.texts()
    for step in story:
        if step.agent == conv.caller and step.marker not in done:
            return step
    return None


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedModel

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self.send_error(400)
            return
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            session = self.headers.get("x-deepseek-harness-session-id")
            self.server.answer(body, self._event, self._comment, session)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _event(self, payload: dict[str, Any] | str) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.wfile.write(f"data: {data}\n\n".encode())
        self.wfile.flush()

    def _comment(self) -> None:
        self.wfile.write(b": keep-alive\n\n")
        self.wfile.flush()


class ScriptedModel(ThreadingHTTPServer):
    """The server; ``base_url`` is what ``DEEPSEEK_BASE_URL`` should be."""

    daemon_threads = True

    def __init__(self, story: tuple[Step, ...] = STORY) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.story = story
        self.ledger = Ledger()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def answer(
        self,
        body: dict[str, Any],
        event: Callable[[dict[str, Any] | str], None],
        comment: Callable[[], None],
        session: str | None = None,
    ) -> None:
        led = self.ledger
        conv = Conversation(_caller(body), tuple(body.get("messages") or ()))
        with led.lock:
            led.models.add(str(body.get("model")))
            if session:
                led.sessions.setdefault(conv.caller, set()).add(session)
            for m in conv.messages:
                if m.get("role") == "tool" and m.get("tool_call_id"):
                    led.results_seen.add(str(m["tool_call_id"]))
            for name, call in (("A", "call_lead_1"), ("B", "call_lead_2")):
                if name not in led.task_ids and conv.tool_result(call):
                    led.task_ids[name] = conv.task_id(call)
            led.changed.notify_all()
        step = _next_step(self.story, conv) if conv.caller != "other" else None
        if step is not None and step.woken_by and step.woken_by not in conv.said_to_me():
            step = None  # an extra turn (a message spliced twice): nothing to do
        if step is not None and step.after:
            deadline = time.monotonic() + HOLD_LIMIT_S
            with led.lock:
                while not set(step.after) <= led.results_seen:
                    if time.monotonic() > deadline:
                        led.failures.append(
                            f"{step.marker} held past {HOLD_LIMIT_S}s for {step.after}"
                        )
                        break
                    led.changed.wait(KEEPALIVE_S)
                    led.lock.release()
                    try:
                        comment()
                    finally:
                        led.lock.acquire()
        with led.lock:
            usage = _usage(led, conv.caller)
            if step is None:
                marker = "Nothing new." if conv.caller != "other" else "Team report"
                args: dict[str, Any] | None = None
            else:
                marker = step.marker
                args = step.args(conv, led) if step.args and step.tool else None
            led.served.append((conv.caller, marker, usage))
            if step is not None and step.tool is None:
                led.results_seen.add(marker)  # a final text: what a later step may follow
                led.changed.notify_all()
        model = str(body.get("model") or "scripted")
        head = {"id": f"chat-{len(led.served)}", "object": "chat.completion.chunk", "model": model}
        if step is not None and step.tool is not None:
            call = {
                "index": 0,
                "id": step.marker,
                "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(args)},
            }
            event(
                head
                | {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]}
            )
            finish = "tool_calls"
        else:
            event(
                head
                | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": marker}}]}
            )
            finish = "stop"
        event(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        event(
            head
            | {
                "choices": [],
                "usage": {
                    "prompt_tokens": usage["prompt_tokens"],
                    "completion_tokens": usage["completion_tokens"],
                    "prompt_cache_hit_tokens": usage["prompt_cache_hit_tokens"],
                    "prompt_cache_miss_tokens": usage["prompt_tokens"]
                    - usage["prompt_cache_hit_tokens"],
                    "completion_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
                },
            }
        )
        event("[DONE]")


@contextmanager
def scripted_model(story: tuple[Step, ...] = STORY) -> Iterator[ScriptedModel]:
    """The server running on a thread, playing ``story``; stopped on exit."""
    server = ScriptedModel(story)
    thread = threading.Thread(target=server.serve_forever, name="scripted-model", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

"""The teams the generator writes: ``story`` (a small real job: the demo's live team),
``full`` (every shape of docs/host-contract.md, §2–§5, hostile text included, in one
team), ``pair`` (a lead and two teammates) and ``lone`` (one session, no team)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from pathlib import Path

from dsh_task_gantt.fixturegen import spec as S
from dsh_task_gantt.fixturegen import texts
from dsh_task_gantt.fixturegen.scale import SCALES
from dsh_task_gantt.fixturegen.seeded import new_uuid
from dsh_task_gantt.fixturegen.session_log import Log
from dsh_task_gantt.fixturegen.sim import MemberMeta, Sim
from dsh_task_gantt.fixturegen.spec import TeamSpec
from dsh_task_gantt.fixturegen.subagents import write_subagent_teams

#: 2026-10-10T12:00:00Z: close to the real logs' epoch, fixed so output never
#: depends on the wall clock.
DEFAULT_START_MS = 1_791_633_600_000
SHAPES = ("full", "pair", "lone", "story")

DEFAULT_CWD = {
    "full": "/Users/dev/work/alpha-service",
    "pair": "/home/dev/Projects/beta app (ünï)",
    "lone": "/home/dev/Projects/beta app (ünï)",
    "story": "/Users/dev/work/invoices-api",
}
PROJECTS = {"full": texts.GANTT, "pair": texts.README, "lone": texts.README, "story": texts.EXPORT}

HOSTILE_TEXT = (
    "Please check this: <script>alert(1)</script> and <img src=x onerror=alert(2)>\n"
    "He said \"quotes' & <b>bold</b> </textarea></div>\n"
    "[click me](javascript:alert(document.cookie)) or javascript:alert(3)\n"
    "{{ 7*7 }} {% raw %} ${7*7} \u202eevil\u202c done."
)

# (name, description, context, traits) for the full team, roster order.
_FULL_ROSTER: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("forker", "Forked from the lead: message marks", "fork", (S.FORKED,)),
    ("planner", "Plans and splits the work", "fresh", ()),
    ("builder", "Builds the reader (renamed later)", "fresh", (S.RENAMED,)),
    ("scout", "Surveys the logs (catalog first)", "fresh", (S.CATALOG_FIRST, S.STRAY_END_SEED)),
    ("tester", "Writes the tests (log ends mid-step)", "fresh", (S.COLD_OPEN_STEP,)),
    ("ghost", "Never came up", "fresh", (S.FAILED,)),
)
_LEAD_INSTRUCTIONS = (
    "You lead a small team. Plan the work, split it into tasks on the team board, spawn "
    "teammates for the parts that can run in parallel, answer their questions, and keep "
    "the human informed. Nobody merges without a green test run."
)
_EXTRA_NAMES = ("docs", "perf", "infra", "ux", "ops", "sec", "data", "qa")
RENAMED_TO = "frontend"


def _spawn(
    sim: Sim, name: str, description: str, context: str, traits: tuple[str, ...]
) -> MemberMeta:
    """One team_spawn tool call on the lead (inside an open step) and what follows it."""
    rng = sim.rng
    lead = sim.lead_log()
    meta = MemberMeta(
        new_uuid(rng), name, [name], "teammate", context, "provisioning", list(traits), None, None
    )
    sim.members.append(meta)

    def on_call(call: object) -> None:
        if S.FAILED in traits:
            sim.member_event(meta, "provisioning", description=description)
            sim.member_event(
                meta,
                "failed",
                description=description,
                error="spawn failed: provider 'spawn' exited with code 1",
            )
            return
        forked = context == "fork"
        if forked or S.CATALOG_FIRST in traits:
            # A fork copies the lead's history before any team/* event about it.
            _start_child(sim, meta, forked)
            if not forked:
                sim.catalog_event(meta, description)
            sim.member_event(meta, "provisioning", description=description)
        else:
            sim.member_event(meta, "provisioning", description=description)
            _start_child(sim, meta, forked)
        sim.member_event(meta, "active", description=description)
        if forked or S.CATALOG_FIRST not in traits:
            sim.catalog_event(meta, description)

    lead.tool(
        "team_spawn",
        {"name": name, "description": description, "context": context},
        on_call,
        result_text=f'{{"ok":true,"name":"{name}"}}',
    )
    return meta


def _start_child(sim: Sim, meta: MemberMeta, forked: bool) -> None:
    lead = sim.lead_log()
    created = max(sim.now, lead.t) + sim.dt(5, 40)
    meta.created_at = created
    log = sim.open_log(meta.id, created, parent=lead.member_id, seeded=forked)
    meta.log = log
    if forked:
        # The copy is the lead's in-memory history at this instant, flushed or not.
        assert lead.history is not None
        log.copy_prefix(list(lead.history))
        log.t = created
        log.emit("session/end-seed", {"inherited": True}, (1, 5))
        for p_i, p in enumerate(sim.prompts):
            if p.member_id == lead.member_id and p.seqs[0] < log.inherited:
                sim.prompts[p_i] = S.PromptSpec(
                    p.id, p.text, p.member_id, p.seqs, p.time, (*p.copied_into, meta.id)
                )
    else:
        log.emit(
            "subagent/descriptor",
            {"parentSession": lead.member_id, "mode": "continuable", "label": meta.name},
            (1, 5),
        )
    log.user_message("agent-instructions", f"You are {meta.name}, a member of the team.")


def _rounds(sim: Sim, logs: list[Log], n: int) -> None:
    for _ in range(n):
        sim.work_round(logs)


def _prompt_text(sim: Sim, lead_words: str) -> str:
    return sim.words.prompt(lead_words)


def _full(sim: Sim, *, live: bool, extra: int) -> None:
    rng = sim.rng
    lead_id = "session-" + new_uuid(rng)
    sim.team_id = lead_id
    lead = sim.add_lead(lead_id)
    lead.history = []
    lead.user_message("agent-instructions", _LEAD_INSTRUCTIONS)
    lead.user_message("runtime-context", "cwd: " + sim.cwd)
    lead.user_message("time-context", "It is 2026-10-10 12:00 UTC.")
    sim.human_prompt(lead, _prompt_text(sim, "Build a Gantt view of the team's work."))

    # Lead turn 1: fork first (so the copied prefix holds no team/* event), then
    # the board, then the rest of the roster.
    lead.begin_turn()
    lead.begin_step()
    lead.assistant()
    roster = list(_FULL_ROSTER)
    roster += [(n, f"Extra hands: {n}", "fresh", ()) for n in _EXTRA_NAMES[:extra]]
    metas = {r[0]: r for r in roster}
    forker = _spawn(sim, *metas["forker"])
    lead.history = None  # no other fork: stop keeping the copy
    lead.end_step()

    lead.begin_step()
    lead.assistant()
    t_handoff = sim.create_task(
        lead_id,
        "Parse multi-frame zstd session logs",
        write_scopes=["plugin/logs"],
        traits=["handoff", "reopened"],
    )
    t_release = sim.create_task(
        lead_id,
        "Fold team/task snapshots into history",
        write_scopes=["plugin/fold"],
        traits=["release"],
    )
    t_lead = sim.create_task(
        lead_id, "Write the release notes", write_scopes=["CHANGELOG.md"], traits=["lead-owned"]
    )
    sim.create_task(lead_id, "Benchmark 10k-line logs", traits=["never-claimed"])
    t_deleted = sim.create_task(lead_id, "Drop the legacy log cache", traits=["deleted"])
    t_cold = sim.create_task(
        lead_id, "Property tests for the folder", write_scopes=["tests"], traits=["owner-went-cold"]
    )
    lead.end_step()

    lead.begin_step()
    lead.assistant()
    members = {"forker": forker}
    for name, *_rest in roster:
        if name != "forker":
            members[name] = _spawn(sim, *metas[name])
    lead.end_step()
    lead.end_turn("completed")
    sim.settle(lead)

    ids = {n: m.id for n, m in members.items()}
    all_logs = [lead, *(m.log for m in members.values() if m.log is not None)]
    beats: list[Callable[[], object]] = []

    def beat(fn: Callable[[], object]) -> None:
        beats.append(fn)

    # Kick-off messages from the lead to every live teammate.
    for name in ids:
        if members[name].log is not None:
            beat(functools.partial(sim.message, lead_id, ids[name], S.NORMAL, topic="kickoff"))
    beat(
        lambda: sim.act(
            ids["planner"],
            lambda: sim.create_task(
                ids["planner"],
                "Render message marks on both lanes",
                blocked_by=[t_handoff],
                write_scopes=["static"],
                traits=["created-by-teammate"],
            ),
        )
    )

    def move(actor: str, task_id: str, action: str) -> Callable[[], object]:
        return lambda: sim.act(
            ids.get(actor, actor), lambda: sim.update_task(ids.get(actor, actor), task_id, action)
        )

    beat(move("builder", t_handoff, "claim"))
    beat(lambda: sim.act(ids["scout"], lambda: sim.update_task(ids["scout"], t_release, "claim")))
    beat(lambda: sim.act(ids["tester"], lambda: sim.update_task(ids["tester"], t_cold, "claim")))
    beat(lambda: sim.act(lead_id, lambda: sim.update_task(lead_id, t_lead, "claim")))
    beat(lambda: sim.message(ids["builder"], ids["planner"], S.NORMAL))

    def stray_end_seed() -> None:
        log = members["scout"].log
        assert log is not None
        sim.sync(log)
        ev = log.emit("session/end-seed", {"inherited": True})
        sim.stray_end_seed = (ids["scout"], ev.seq)
        sim.settle(log)

    beat(stray_end_seed)
    beat(
        lambda: sim.act(
            ids["builder"], lambda: sim.update_task(ids["builder"], t_handoff, "complete")
        )
    )

    def rename() -> None:
        meta = members["builder"]
        meta.aliases.append(RENAMED_TO)
        sim.member_event(meta, "active", description="Builds the reader and the UI")
        sim.settle(lead)

    beat(rename)

    def human_mid() -> None:
        sim.sync(lead)
        sim.human_prompt(lead, _prompt_text(sim, "The reader misses the last frame; reopen it."))
        lead.user_message("time-context", "It is later now.")
        sim.act(lead_id, lambda: sim.update_task(lead_id, t_handoff, "reopen"))

    beat(human_mid)
    beat(lambda: sim.rewind(t_handoff, 2))
    beat(lambda: sim.act(ids["scout"], lambda: sim.update_task(ids["scout"], t_release, "release")))
    beat(
        lambda: sim.act(ids["planner"], lambda: sim.update_task(ids["planner"], t_handoff, "claim"))
    )
    beat(move("builder", t_release, "claim"))
    beat(lambda: sim.message(ids["scout"], lead_id, S.ORPHAN_DELIVERY, queue=False))
    beat(lambda: sim.message(ids["planner"], new_uuid(rng), S.OFF_ROSTER))
    beat(lambda: sim.message(lead_id, ids["builder"], S.LONG, _long_text(sim)))
    beat(lambda: sim.message(ids["scout"], ids["forker"], S.HOSTILE, HOSTILE_TEXT))
    beat(
        lambda: sim.act(
            ids["builder"], lambda: sim.update_task(ids["builder"], t_release, "complete")
        )
    )

    def duplicated_prompt() -> None:
        sim.sync(lead)
        mid = new_uuid(rng)
        text = _prompt_text(sim, "Also show who sent each message.")
        sim.human_prompt(lead, text, msg_id=mid)
        sim.human_prompt(lead, text, msg_id=mid)  # the same prompt written twice
        lead.user_message("tool-jobs", "1 background job finished.")
        lead.filler_turn(2)
        sim.settle(lead)

    beat(duplicated_prompt)
    beat(
        lambda: sim.act(
            ids["planner"], lambda: sim.update_task(ids["planner"], t_handoff, "complete")
        )
    )
    beat(lambda: sim.act(ids["forker"], lambda: sim.update_task(ids["forker"], "task-7", "claim")))
    beat(lambda: sim.message(ids["forker"], lead_id, S.NORMAL))
    beat(lambda: sim.message(ids["tester"], lead_id, S.NORMAL))
    beat(
        lambda: sim.act(ids["forker"], lambda: sim.update_task(ids["forker"], "task-7", "complete"))
    )
    beat(lambda: sim.act(lead_id, lambda: sim.update_task(lead_id, t_lead, "complete")))
    beat(lambda: sim.act(lead_id, lambda: sim.update_task(lead_id, t_deleted, "delete")))
    beat(lambda: sim.message(ids["planner"], ids["scout"], S.NORMAL))
    beat(lambda: _odd_graph(sim, lead_id, t_deleted))

    rounds = sim.scale.rounds
    for i, fn in enumerate(beats):
        fn()
        n = rounds // len(beats) + (1 if i < rounds % len(beats) else 0)
        _rounds(sim, all_logs, n)

    # The tester dies mid-step: its log ends on an open turn and step.
    tester = members["tester"].log
    assert tester is not None
    sim.sync(tester)
    tester.begin_turn()
    tester.begin_step()
    tester.assistant()
    sim.settle(tester)
    _rounds(sim, [log for log in all_logs if log is not tester], 1)
    sim.message(ids["forker"], ids["planner"], S.UNDELIVERED, deliver=False)

    # Finale on the lead (the last events of the team).
    sim.sync(lead)
    for name in ("forker", "planner", "builder", "scout"):
        lead.user_message("subagent-settled", f"{ids[name]} settled.")
    lead.user_message("schedule", "Daily check-in at 09:00.")
    lead.user_message("plugin:reminders", "Remember to commit.")
    _end_lead(sim, lead, live=live, prompt=_prompt_text(sim, "Keep going.") if live else "")


def _odd_graph(sim: Sim, lead_id: str, deleted: str) -> None:
    """The task graph's odd cases, each one DSH refuses (docs/host-contract.md §7): a blocker not on
    the board, a cycle written anyway, a dependency on a deleted task, a skipped
    revision."""

    def body() -> None:
        sim.create_task(
            lead_id, "Port the reader to Rust", blocked_by=["task-99"], traits=["missing-blocker"]
        )
        a = sim.create_task(lead_id, "Agree on the wire format", traits=["cycle"])
        b = sim.create_task(lead_id, "Freeze the wire format", blocked_by=[a], traits=["cycle"])
        sim.update_task(lead_id, a, "set_dependencies", blocked_by=[b])
        sim.create_task(
            lead_id, "Restore the legacy cache", blocked_by=[deleted], traits=["on-deleted"]
        )
        c = sim.create_task(lead_id, "Tag the release", traits=["skipped-revision"])
        sim.update_task(
            lead_id, c, "edit", description="Tag it once CI is green.", skip_revision=True
        )

    sim.act(lead_id, body)


def _end_lead(sim: Sim, lead: Log, *, live: bool, prompt: str) -> None:
    """The lead's last turn: live, the human's ``prompt`` and a step still open;
    frozen, a closed filler turn."""
    if live:
        sim.human_prompt(lead, prompt)
        lead.begin_turn()
        lead.begin_step()
        lead.assistant()
        sim.live = True
    else:
        lead.filler_turn(2)


def _long_text(sim: Sim) -> str:
    """Longer than the 16,384-character message cap, with newlines."""
    return sim.words.paste(17_000)


def _pair(sim: Sim, *, live: bool) -> None:
    rng = sim.rng
    lead_id = "session-" + new_uuid(rng)
    sim.team_id = lead_id
    lead = sim.add_lead(lead_id)
    lead.user_message("time-context", "It is 2026-10-10 15:00 UTC.")
    sim.human_prompt(lead, _prompt_text(sim, "Write and review the README."))
    lead.begin_turn()
    lead.begin_step()
    lead.assistant()
    t_write = sim.create_task(lead_id, "Write the README", write_scopes=["README.md"])
    t_review = sim.create_task(lead_id, "Review the README", blocked_by=[t_write])
    lead.end_step()
    lead.begin_step()
    writer = _spawn(sim, "writer", "Writes docs", "fresh", ())
    reviewer = _spawn(sim, "reviewer", "Reviews docs", "fresh", ())
    lead.end_step()
    lead.end_turn("completed")
    sim.settle(lead)
    w, r = writer.id, reviewer.id
    logs = [lead, *(m.log for m in (writer, reviewer) if m.log is not None)]
    sim.message(lead_id, w, S.NORMAL, topic="kickoff", about=t_write)
    sim.act(w, lambda: sim.update_task(w, t_write, "claim"))
    _rounds(sim, logs, 2)
    sim.act(w, lambda: sim.update_task(w, t_write, "complete"))
    sim.message(w, r, S.NORMAL, topic="report", about=t_write)
    sim.act(r, lambda: sim.update_task(r, t_review, "claim"))
    _rounds(sim, logs, 2)
    sim.act(r, lambda: sim.update_task(r, t_review, "complete"))
    sim.message(r, lead_id, S.NORMAL, topic="report", about=t_review)
    sim.sync(lead)
    lead.user_message("subagent-settled", f"{w} settled.")
    if live:
        sim.human_prompt(lead, _prompt_text(sim, "Ship it."))
        lead.begin_turn()
        lead.begin_step()
        sim.live = True
    else:
        lead.filler_turn(1)


def _lone(sim: Sim, *, live: bool) -> None:
    lead = sim.add_lead("session-" + new_uuid(sim.rng))
    lead.user_message("time-context", "It is 2026-10-10 18:00 UTC.")
    for words in ("What does this repository do?", "Summarise the open issues."):
        sim.human_prompt(lead, sim.words.prompt(words, context=False))
        lead.filler_turn(sim.rng.randint(1, 3))
    if live:
        sim.human_prompt(lead, _prompt_text(sim, "One more thing."))
        lead.begin_turn()
        sim.live = True


_STORY_REQUEST = (
    "Our accountants want to download invoices as a spreadsheet. Add a CSV export to the "
    "invoices API: GET /invoices/export.csv, same filters as GET /invoices, streamed so a "
    "whole year of invoices does not load into memory at once."
)
#: The human, mid-job, in Chinese: Excel shows the customers' Chinese names garbled.
_STORY_ENCODING_PROMPT = (
    "导出的 CSV 用 Excel 打开时中文名字是乱码，能不能顺便处理一下编码？客户名里有很多中文。"
)
_STORY_ROSTER = (
    ("api", "Adds the export endpoint to app/routes/invoices.py"),
    ("csv", "Turns invoice rows into CSV, streamed"),
    ("qa", "Writes the export's tests and checks edge cases"),
)


#: A task the lead adds and then drops (the accountants only need CSV).
_STORY_UNNEEDED = "Offer the export as XLSX too"


def _story(sim: Sim, *, live: bool) -> None:
    """A lead and three teammates adding a CSV export to an invoices API: planning,
    claims, questions and answers, reports with code, a human prompt in Chinese."""
    lead_id = "session-" + new_uuid(sim.rng)
    sim.team_id = lead_id
    # Its one-line replies and its messages in Chinese are in the script below.
    sim.words.one_liners = sim.words.chinese_reports = 0.0
    lead = sim.add_lead(lead_id)
    lead.user_message("agent-instructions", _LEAD_INSTRUCTIONS)
    lead.user_message("runtime-context", "cwd: " + sim.cwd)
    sim.human_prompt(lead, _prompt_text(sim, _STORY_REQUEST))
    lead.begin_turn()
    lead.begin_step()
    lead.assistant()
    t_route = sim.create_task(
        lead_id, "Add GET /invoices/export.csv", write_scopes=["app/routes/invoices.py"]
    )
    t_rows = sim.create_task(
        lead_id, "Stream invoice rows as CSV", write_scopes=["app/export/csv_rows.py"]
    )
    t_tests = sim.create_task(
        lead_id,
        "Tests for the CSV export",
        blocked_by=[t_route, t_rows],
        write_scopes=["tests/test_invoice_export.py"],
    )
    t_docs = sim.create_task(
        lead_id, "Document the export endpoint", write_scopes=["docs/api/invoices.md"]
    )
    # The docs describe the route as built: they wait for it (a chain beside the fan-in).
    sim.update_task(lead_id, t_docs, "set_dependencies", blocked_by=[t_route])
    lead.end_step()
    lead.begin_step()
    mates = {name: _spawn(sim, name, about, "fresh", ()).id for name, about in _STORY_ROSTER}
    lead.end_step()
    lead.end_turn("completed")
    sim.settle(lead)
    logs = [lead, *(sim.log_of(i) for i in mates.values())]
    api, csv, qa = mates["api"], mates["csv"], mates["qa"]

    def move(actor: str, task_id: str, action: str) -> None:
        sim.act(actor, lambda: sim.update_task(actor, task_id, action))

    for mate, task_id in ((api, t_route), (csv, t_rows), (qa, t_tests)):
        sim.message(lead_id, mate, S.NORMAL, topic="kickoff", about=task_id)
    move(api, t_route, "claim")
    move(csv, t_rows, "claim")
    sim.message(qa, api, S.NORMAL, topic="question")
    sim.message(api, qa, S.NORMAL, topic="answer")
    sim.message(qa, api, S.NORMAL, sim.words.short())
    _rounds(sim, logs, 2)
    rows = sim.task(t_rows)
    text = sim.words.message(
        "csv", "lead", topic="progress", chinese=True, task=rows.subject, scope=rows.write_scopes[0]
    )
    sim.message(csv, lead_id, S.NORMAL, text)
    _rounds(sim, logs, 1)
    move(csv, t_rows, "complete")
    sim.message(csv, api, S.NORMAL, topic="report", about=t_rows)
    sim.message(api, csv, S.NORMAL, sim.words.short(chinese=True))

    sim.sync(lead)
    sim.human_prompt(lead, _STORY_ENCODING_PROMPT)
    lead.begin_turn()
    lead.begin_step()
    lead.assistant()
    t_bom = sim.create_task(lead_id, sim.words.follow_up(), write_scopes=["app/export/csv_rows.py"])
    t_xlsx = sim.create_task(lead_id, _STORY_UNNEEDED, write_scopes=["app/export/xlsx.py"])
    # The tests will touch the export module too (a fixture for the BOM): overlapping
    # scopes with the follow-up, which csv works on at the same time.
    sim.update_task(
        lead_id,
        t_tests,
        "edit",
        write_scopes=["tests/test_invoice_export.py", "app/export"],
    )
    lead.end_step()
    lead.end_turn("completed")
    sim.settle(lead)
    sim.message(lead_id, csv, S.NORMAL, topic="kickoff", about=t_bom)
    # The lead puts csv on the follow-up (an assignment), and drops the XLSX idea.
    sim.act(lead_id, lambda: sim.update_task(lead_id, t_bom, "reassign", owner=csv))
    sim.act(lead_id, lambda: sim.update_task(lead_id, t_xlsx, "delete"))
    _rounds(sim, logs, 1)
    move(api, t_route, "complete")
    route = sim.task(t_route)
    text = sim.words.message(
        "api", "lead", topic="report", chinese=True, task=route.subject, scope=route.write_scopes[0]
    )
    sim.message(api, lead_id, S.NORMAL, text)
    move(qa, t_tests, "claim")
    # api offers to write the docs, then hands them back to the lead.
    move(api, t_docs, "claim")
    move(api, t_docs, "release")
    move(lead_id, t_docs, "claim")
    _rounds(sim, logs, 2)
    move(csv, t_bom, "complete")
    sim.message(csv, qa, S.NORMAL, topic="report", about=t_bom)
    move(lead_id, t_docs, "complete")
    sim.message(qa, csv, S.NORMAL, topic="question")
    sim.message(csv, qa, S.NORMAL, topic="answer")
    _rounds(sim, logs, 1)
    move(qa, t_tests, "complete")
    sim.message(qa, lead_id, S.NORMAL, topic="report", about=t_tests)
    sim.sync(lead)
    for mate in (api, csv):
        lead.user_message("subagent-settled", f"{mate} settled.")
    _end_lead(sim, lead, live=live, prompt=sim.words.status_prompt() if live else "")


def generate_team(
    root: Path,
    *,
    seed: int,
    scale: str = "small",
    shape: str = "full",
    name: str | None = None,
    cwd: str | None = None,
    start_ms: int = DEFAULT_START_MS,
    live: bool = False,
    compress: bool = True,
) -> TeamSpec:
    """Write one team (or lone session) under the sessions ``root``; return its spec.

    Same arguments → byte-identical files. ``live`` leaves the lead on an open turn.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}")
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    sim = Sim(
        root,
        rng=random.Random(seed),
        scale=SCALES[scale],
        name=name or shape,
        seed=seed,
        cwd=cwd if cwd is not None else DEFAULT_CWD[shape],
        start_ms=start_ms,
        compress=compress,
        project=PROJECTS[shape],
    )
    if shape == "story":
        _story(sim, live=live)
    elif shape == "full":
        _full(sim, live=live, extra=sim.scale.extra_teammates)
    elif shape == "pair":
        _pair(sim, live=live)
    else:
        _lone(sim, live=live)
    sim.finish()
    return sim.spec()


#: The committed set under fixtures/sessions (see fixtures/README.md).
FIXTURE_SEED = 20261010
#: The bundled team a newcomer sees first (``serve --demo`` keeps it live).
STORY_TEAM = "invoices"
STORY_SEED_OFFSET = 3


def generate_fixture_set(root: Path, *, seed: int = FIXTURE_SEED) -> dict[str, TeamSpec]:
    """invoices (story: the demo's live team), alpha (full, frozen), beta (pair) and
    lone, in three workspaces; then the
    subagent teams gamma (format 3 with a format-0 child) and delta (format 0),
    whose ground truth is :mod:`dsh_task_gantt.fixturegen.subagents`."""
    hour = 3_600_000
    specs = {
        "alpha": generate_team(root, seed=seed, shape="full", name="alpha"),
        "beta": generate_team(
            root, seed=seed + 1, shape="pair", name="beta", start_ms=DEFAULT_START_MS + 3 * hour
        ),
        "lone": generate_team(
            root, seed=seed + 2, shape="lone", name="lone", start_ms=DEFAULT_START_MS + 6 * hour
        ),
        STORY_TEAM: generate_team(
            root,
            seed=seed + STORY_SEED_OFFSET,
            shape="story",
            name=STORY_TEAM,
            start_ms=DEFAULT_START_MS + 20 * hour,
        ),
    }
    write_subagent_teams(root)
    return specs

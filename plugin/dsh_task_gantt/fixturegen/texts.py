"""What the generated teams write: phrase banks and templates for human prompts, task
descriptions and team messages, so a bundled team reads like people doing a small job.

A :class:`Project` names the job (its files, test, function); :class:`Texts` draws
from the banks with the ``random.Random`` it is given, so output stays deterministic.
Message lengths follow real teams: median about 1,800 characters, some one-liners;
about one report in four is written in Chinese. A message is written part by part in
the order people write one (a report: what changed, the code, how it was tested, what
it measured, the decisions, what is next), so a long one reads as a whole, not as
shuffled paragraphs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_task_gantt.fixturegen.seeded import lognormal


@dataclass(frozen=True, slots=True)
class Project:
    """The vocabulary one team's texts are filled in with."""

    goal: str
    files: tuple[str, ...]
    tests: tuple[str, ...]
    functions: tuple[str, ...]
    follow_ups: tuple[str, ...]


GANTT = Project(
    goal="the Gantt view of the team's work",
    files=(
        "plugin/logs/reader.py",
        "plugin/fold/tasks.py",
        "plugin/timeline.py",
        "static/panel.js",
        "static/panel.css",
        "plugin/fold/messages.py",
    ),
    tests=("tests/test_reader.py", "tests/test_fold.py", "tests/test_timeline.py"),
    functions=("read_frames", "fold_tasks", "build_timeline", "lane_for", "attribute_revision"),
    follow_ups=(
        "Show the sender's name on every message mark",
        "Keep the scroll position across polls",
        "Handle a torn last frame without a warning",
        "Colour lanes by member, not by role",
    ),
)

README = Project(
    goal="the README for the first release",
    files=("README.md", "docs/install.md", "docs/usage.md", "CHANGELOG.md", "pyproject.toml"),
    tests=("tests/test_readme_examples.py", "tests/test_cli.py"),
    functions=("main", "parse_args", "run_example"),
    follow_ups=(
        "Add a troubleshooting section",
        "Check every command in the README on a clean venv",
        "Link the changelog from the README",
    ),
)

EXPORT = Project(
    goal="CSV export for the invoices API",
    files=(
        "app/routes/invoices.py",
        "app/export/csv_rows.py",
        "app/db/queries.py",
        "app/models/invoice.py",
        "docs/api/invoices.md",
        "app/settings.py",
    ),
    tests=("tests/test_invoice_export.py", "tests/test_csv_rows.py"),
    functions=("export_invoices", "invoice_rows", "stream_csv", "fetch_invoices_page"),
    follow_ups=(
        "Add a BOM so Excel opens the export as UTF-8",
        "Limit the export to 50,000 rows per request",
        "Log the export's duration and row count",
        "Let the export filter by customer id",
        "Document the export's column order",
    ),
)

# -- human prompts -------------------------------------------------------------

_PROMPT_CONTEXT = (
    "Keep it small: one change per task, tests next to the code, and tell me before you "
    "touch anything outside {file}.",
    "We ship on Friday, so prefer the boring solution. If something is unclear, ask in "
    "the team instead of guessing.",
    "The last attempt stalled because two people edited {file} at once. Split the work so "
    "nobody waits on anyone for long.",
    "Run the full test suite before you say a task is done, and paste the summary line.",
    "I will review the diff tonight; leave a short note on anything you were unsure about.",
)

#: What the human asks a live team now and then.
STATUS_PROMPTS = (
    "How far along are we? One line per task is enough.",
    "Is anything blocked? If {file} is the problem, say so.",
    "Before you go further: are the tests green on main?",
    "进展怎么样？有阻塞的地方就直接说。",
    "Please post the test summary line when the current task is done.",
    "Can someone double-check {function} against an empty input?",
    "这个改动会影响 {file} 的现有行为吗？",
)

# -- team messages -------------------------------------------------------------

_SHORT_EN = (
    "Thanks, that answers it. Going ahead with {file}.",
    "Thanks, that works. Merging {file} now.",
    "On it.",
    "Claimed. I'll report back when {test} passes.",
    "Done: {test} is green (31 passed). Moving on to the next task.",
    "Quick question: do we keep {function} public, or is it internal now?",
    "Good catch, fixed in {file}.",
    "Pushed. Can you take a look when you have a minute?",
)

_SHORT_ZH = (
    "收到，我来处理 {file}。",
    "好的，{test} 已经通过了。",
    "这个我今天下午能做完。",
    "{function} 还需要改吗？我这边已经写好测试了。",
)

_OPENERS_EN = {
    "kickoff": (
        "Hi {target}, here is your part of {goal}.",
        "{target}: welcome aboard. The plan for {goal} is on the board; this is your slice.",
        "Kicking off {goal}. {target}, please take the first task in your area.",
    ),
    "question": (
        "{target}, a question before I go further.",
        "Hey {target}, I am stuck on one detail and you know this part better than I do.",
        "{target}: quick check so we don't both change {file}.",
    ),
    "answer": (
        "Good question, {target}.",
        "{target}, short answer: yes, but with one caveat.",
        "Answering your question about {function}:",
    ),
    "progress": (
        "Status update on “{task}”.",
        "{target}, here is where I am with “{task}”.",
        "Halfway through “{task}”; notes so far.",
    ),
    "report": (
        "Done with “{task}”. Summary below.",
        "{target}, “{task}” is ready for review.",
        "Finished “{task}”. Here is what changed and how I checked it.",
    ),
}

# A lead's kick-off, in the order a lead writes one: the task and its files first,
# then why, where to start, risks, the contract, what done means, how to work together.
_KICKOFF_EN = (
    "Your task on the board is “{task}”. It touches {file}. Please don't edit "
    "{other} without asking first; it belongs to a task that runs in parallel with yours.",
    "Background: the human asked for {goal}. I split it into small tasks so the pieces can "
    "land one at a time. Others wait on yours, so a first version that works beats a "
    "perfect one that arrives tomorrow.",
    "Start by reading {function} in {file}; it already does about half of what we need. If "
    "it turns out to be the wrong place, tell me before you build around it.",
    "Risks I already see: {file} has no tests for the error paths, so add one before you "
    "change it, and {function} is called from two places with slightly different inputs. "
    "Read both callers before you touch its signature.",
    "The contract the others will code against, so please keep to it or tell me first:\n\n"
    "```python\ndef {function}(rows: Iterable[Row], *, columns: Sequence[str] = COLUMNS)"
    " -> Iterator[str]:\n"
    '    """One line per row, the header line first; nothing held in memory."""\n```',
    "Constraints: no new dependencies without asking, keep memory flat on big inputs (never "
    "hold the whole result in a list), and keep every public signature as it is.",
    "Done means: {test} covers the new behaviour, the full suite is green, and ruff and "
    "mypy are clean. Paste the pytest summary line in your report, not just 'tests pass'.",
    "Order of work, as I see it: the pieces that touch different files go in parallel; the "
    "tests wait for them but can start from the fixtures today; the docs come last, once "
    "the names are settled. If you finish early, take the next pending task.",
    "What I care about most in review: that the behaviour on an empty result and on a "
    "failure half way is deliberate and tested, and that the diff stays small enough to "
    "read in one sitting. Naming and comments I can fix with you afterwards.",
    "Claim the task on the board before you start so the others can see who is on it, and "
    "message me if you are blocked for more than a few minutes. Questions to each other "
    "are fine too; you don't need to go through me.",
)

# Each question comes with what the asker would do; its answer (same index) follows.
_QUESTION_EN = (
    "Does {function} need to keep accepting its old argument? I see one caller in {file} "
    "that still passes it positionally, and I would rather not break it by accident. My "
    "plan would be to keep it for one release with a deprecation warning.",
    "What should happen on an empty result: an empty body, or just the header line? I would "
    "say header only, so whatever opens it still sees the columns, but the list endpoint "
    "returns an empty body today and I don't want the two to disagree silently.",
    "Are you changing {file} right now? I need to add two lines there (an import and one "
    "call) and don't want us both to end up resolving the same conflict. If you are, I can "
    "wait for your push or send you the two lines to include.",
    "Is it fine if {test} builds its data with a small factory instead of the big JSON "
    "fixture? The fixture is 4 MB and makes the test take several seconds, and half of its "
    "fields predate the last model change.",
    "Which order do you want the fields in? I would follow the model, but the docs list them "
    "differently and I don't know which one clients rely on. Once we pick one I will put it "
    "in a single constant so the code and the docs cannot drift apart again.",
)

_ANSWER_EN = (
    "Keep the old argument for now, but say in the docstring that it is deprecated; we drop "
    "it once the callers in {file} are migrated, in a separate change. A warning is fine "
    "as long as the test suite does not turn warnings into errors for that module.",
    "Header only on an empty result. That is what the list endpoint's clients expect as "
    "well (the empty body there is a bug with its own ticket), and it keeps the output "
    "self-describing.",
    "I am done with {file} for today, go ahead. I pushed my last change ten minutes ago, so "
    "pull first and you should not see a conflict; the import block is where we would "
    "collide, so add yours at the end of it.",
    "Use the factory. The JSON fixture predates the last model change and half of its "
    "fields are stale anyway; I would not build new tests on it. Put the factory next to "
    "the other helpers in tests/conftest.py so the others can reuse it.",
    "Follow the model's order. The docs are out of date there; I will fix them as part of "
    "my task and mention it in the changelog. A single COLUMNS constant is a good idea: "
    "import it in the docs test too.",
)

# What the asker adds after the question: where they are and what they tried.
_ASK_CONTEXT_EN = (
    "Where I am: the happy path of “{task}” works locally and {test} has three passing "
    "cases. What is left depends on the answer, so I would rather ask than guess and redo it.",
    "For context, I read {function} and both of its callers in {file} before asking; the "
    "code does not settle it either way, and git blame points at a commit without a "
    "message.",
    "I tried both variants on a copy of the sample data. Either works; the difference is "
    "only in what a client sees, which is why I don't want to pick on my own.",
    "The reason I am asking now rather than in review: {file} is imported by the worker "
    "as well as by the web app, so whatever we choose here shows up in two places, and "
    "changing it later means touching both and their tests.",
)

# What the asker shows of their work so far, and what the answer shows.
_ASK_CODE_EN = (
    "What I have so far:\n\n```python\ndef {function}(rows, *, columns=COLUMNS):\n"
    "    yield csv_line(columns)\n"
    "    for row in rows:\n"
    "        yield csv_line([row[c] for c in columns])\n```",
    "The caller in question:\n\n```python\n"
    "rows = {function}(request.query, True)  # passed positionally\n```",
)

_ANSWER_CODE_EN = (
    "Something like this:\n\n```python\nif not rows:\n"
    "    yield csv_line(COLUMNS)  # the header alone\n"
    "    return\n```",
    "That is how the list endpoint does it:\n\n```python\n"
    "@router.get('/invoices')\ndef list_invoices(filters: Filters = Depends()):\n"
    "    return paginate(fetch_invoices_page(filters))\n```",
)

# What the asker would do, said after the question so the other can just say yes.
_ASK_PROPOSAL_EN = (
    "What I would do unless you see a problem: keep the current behaviour behind the old "
    "name, add the new one beside it, and switch the callers in {file} one by one in "
    "separate commits, each with its test. That way a revert stays small.",
    "My proposal: decide it in one place ({function}) and have everything else call it, "
    "with a test in {test} that pins the choice. Then the docs can quote the test, and "
    "nobody has to remember the rule.",
    "If you agree, I would also add a short comment at the top of {file} saying why, "
    "because the next person to read it will ask the same question I did.",
)

_ASK_CLOSERS_EN = (
    "No rush: I will write the tests for the parts that don't depend on it meanwhile.",
    "If you don't know either, say so and I will ask the lead.",
    "I'll wait for your answer before I push.",
)

# Why the answer is what it is, and a pointer beyond it.
_ANSWER_MORE_EN = (
    "The reason, in case it comes up in review: a client that reads the first line to "
    "find the columns breaks on an empty body, and we cannot fix clients we do not own. "
    "Consistency with the existing endpoints matters more than saving a few bytes.",
    "While you are in there: {function} swallows a KeyError that it should not. Don't fix "
    "it in your change (it needs its own test), but leave a TODO with your name so we "
    "find it again.",
    "One more thing I noticed: {test} sets the time zone globally and never restores it. "
    "If your new tests compare timestamps, use the fixture that pins it instead, or they "
    "will pass alone and fail in the full run.",
    "For the record, I checked the other endpoints before answering: they all behave this "
    "way except one, which has a ticket. So this is the rule, not a local preference, and "
    "it is fine to say so in the docstring.",
    "On testing it: one case for the rule itself in {test}, and one through the route, so "
    "a refactor that bypasses {function} still gets caught. Two tests are enough; the rest "
    "is covered by what is already there.",
    "And thanks for asking instead of guessing: the last time this came up we found out in "
    "production, from a customer's spreadsheet. A two-line question is much cheaper than "
    "that.",
    "If it turns out to be more work than it looks (more than an hour, say), stop and tell "
    "the lead: we can ship without it and do it as a follow-up task. The export matters "
    "more than this detail.",
)

# A report, part by part in the order people write one.
_CHANGED_EN = (
    "What changed: {function} in {file} now takes the already-parsed rows instead of the "
    "raw request, and the old signature is a thin wrapper around it until the callers are "
    "migrated. That keeps the diff reviewable and the behaviour the same for everyone else.",
    "I read through {file} first. {function} does more than its name says: it also "
    "decides what to do with malformed input, and two callers rely on that. I kept that "
    "behaviour and moved the parsing into a helper so the happy path reads top to bottom.",
    "The change is in {file}: {function} writes each row as soon as it is read instead of "
    "building the whole list first, and the response streams it. Nothing else moved; the "
    "public signature is the same.",
    "I looked at how {function} is called from {file}. There are three call sites; two "
    "pass keyword arguments and one passes positionals, so I made the new parameter "
    "keyword-only to avoid silently shifting the positional one.",
)

_CODE_EN = (
    "The core of it:\n\n```python\ndef {function}(rows, *, page_size=500):\n"
    "    for start in range(0, len(rows), page_size):\n"
    "        yield from rows[start : start + page_size]\n```",
    "The test that caught it:\n\n```python\ndef test_page_boundary_keeps_every_row():\n"
    "    rows = make_rows(1001)\n"
    "    assert [r.id for r in {function}(rows)] == [r.id for r in rows]\n```",
    "The diff is small:\n\n```diff\n-    items = sorted(items, key=lambda i: i.created_at)\n"
    "+    items = sorted(items, key=lambda i: (i.created_at, i.id))\n```",
    "The new helper, in full:\n\n```python\ndef csv_line(values: Sequence[object]) -> str:\n"
    "    out = io.StringIO()\n"
    "    csv.writer(out, lineterminator='\\n').writerow(values)\n"
    "    return out.getvalue()\n```",
)

_TESTED_EN = (
    "Tests: I added four cases to {test} — the empty case, a single row, a row with a "
    "comma and a quote in it, and a page boundary. The last one caught an off-by-one in "
    "the loop that has probably been there since the first version.",
    "I ran the whole suite locally: everything passes, and ruff and mypy are clean. The "
    "slowest test is still the one that builds a large fixture; it takes about 2.4 s on "
    "my machine, which is fine for now but worth a look later.",
    "Output of the run:\n\n```\n$ pytest -q {test}\n........................\n"
    "24 passed in 1.87s\n```",
    "Edge cases I checked by hand: an empty result, a value with a newline in it, a name "
    "with non-ASCII letters (Zoë, 王芳), and a request that times out halfway. All four "
    "behave; the last one now returns a clear error instead of a truncated file.",
)

_MEASURED_EN = (
    "I measured before and after on the sample data (12,000 rows): 410 ms before, 95 ms "
    "after, and peak memory went from 180 MB to 22 MB because we no longer build the "
    "whole list before writing it out.",
    "Timing on the big sample (a year of invoices, 240,000 rows): the first byte now "
    "arrives after 40 ms instead of 6 s, and the whole export takes about as long as "
    "before. Memory stays flat at about 30 MB however many rows there are.",
)

_DECISIONS_EN = (
    "One thing I am not sure about is the ordering. Right now we sort by creation time, "
    "but two records created in the same millisecond come out in database order, which "
    "is not stable. I added the id as a tie-breaker; say so if you object.",
    "Heads-up: {file} is also touched by the other task, so I only changed the function "
    "body and left the imports alone. If you need to edit the same file, pull first; the "
    "conflict would be in the import block otherwise.",
    "What I did not do: I left the error messages as they were, because changing their "
    "wording would break the client that matches on them. That deserves its own task "
    "with a note in the changelog.",
    "Review notes for whoever picks this up next: the naming in {file} is inconsistent "
    "(some helpers say rows, others say records). I did not rename anything in this "
    "change to keep the diff small, but it would be a cheap clean-up.",
    "A decision you may want to revisit: a value that starts with =, + or - is written as "
    "it is. Spreadsheets treat such a cell as a formula; quoting it is safer, but it "
    "changes what other tools read, so I left it for a separate change.",
    "On errors half way: the response has already started by then, so we cannot change "
    "the status code. I end the stream with a last line that says what failed, and the "
    "client's test checks for it; the log has the details.",
)

_NEXT_EN = (
    "If you want to reproduce it: check out the branch, run the test with -k boundary, "
    "and watch the second page start one row too late. With the fix it starts at the "
    "right row and the test asserts the exact ids on both sides of the boundary.",
    "Next, unless you say otherwise: I update the docs for {function} and then take the "
    "next pending task on the board. The branch is pushed; the commit message lists the "
    "files touched.",
    "What is left on my side: the docstring of {function} and one more test for a failure "
    "half way through. Both are small; I expect to be done within the hour.",
)

#: A report's sections in order, each with how many of its paragraphs it may hold;
#: later ones are written only while the message is shorter than the length drawn.
_REPORT_EN = (
    (_CHANGED_EN, 2),
    (_CODE_EN, 1),
    (_TESTED_EN, 3),
    (_MEASURED_EN, 1),
    (_DECISIONS_EN, 6),
    (_NEXT_EN, 1),
)

_CLOSERS_KICKOFF = (
    "Shout if anything in the plan looks wrong to you.",
    "Thanks, and welcome to the team.",
    "",
)

_CLOSERS_EN = (
    "Let me know if you want it done differently.",
    "I'll pick up the next pending task unless you say otherwise.",
    "Ping me if the review turns something up.",
    "",
)

_OPENERS_ZH = (
    "{target}，同步一下“{task}”的进度。",
    "“{task}”做完了，总结如下。",
    "{target}，我这边的任务做完了，请帮忙看一下。",
)

_CHANGED_ZH = (
    "先说结论：{function} 现在接收已经解析好的行，而不是原始请求；旧的签名保留为一个薄包装，"
    "等 {file} 里的调用方都迁移完再删。这样每次改动都很小，也方便审查。",
    "我先看了 {file}，{function} 除了解析输入以外还负责处理格式错误的数据，有两个调用方依赖"
    "这个行为，所以我保留了它，只是把解析部分拆成了一个单独的函数，主流程现在从上到下一眼就能看懂。",
    "改动集中在 {file}：{function} 现在每读到一行就立刻写出去，不再先把所有结果放进一个列表，"
    "响应也改成了流式返回。公开的函数签名没有变，其他调用方不受影响。",
    "{function} 一共有三处调用：两处用关键字参数，一处用位置参数。为了避免位置参数被悄悄错位，"
    "我把新参数设成了仅限关键字参数，并在文档字符串里说明了原因。",
)

_CODE_ZH = (
    "核心改动如下：\n\n```python\ndef {function}(rows, *, page_size=500):\n"
    "    for start in range(0, len(rows), page_size):\n"
    "        yield from rows[start : start + page_size]\n```",
    "排序只改了一行：\n\n```diff\n-    items = sorted(items, key=lambda i: i.created_at)\n"
    "+    items = sorted(items, key=lambda i: (i.created_at, i.id))\n```",
)

_TESTED_ZH = (
    "测试方面，我在 {test} 里加了四个用例：空输入、只有一行、字段里带逗号和引号、以及分页边界。"
    "最后一个用例发现了循环里的一个差一错误，这个问题大概从第一版就存在了。",
    "本地运行结果：\n\n```\n$ pytest -q {test}\n........................\n24 passed in 1.87s\n```",
    "边界情况我手动验证过：空结果、字段里有换行、名字里有非 ASCII 字符（Zoë、王芳），"
    "以及请求中途超时。前三个都正常，最后一个现在会返回明确的错误，而不是一个被截断的文件。",
    "全部测试在本地都通过了，ruff 和 mypy 也没有报错。最慢的测试大概 2.4 秒，暂时可以接受，"
    "以后可以考虑把那个很大的测试数据换成一个小的工厂函数。",
)

_MEASURED_ZH = (
    "用示例数据（12,000 行）测了一下：改之前 410 毫秒，改之后 95 毫秒，"
    "峰值内存从 180 MB 降到 22 MB，因为现在不会先把整个列表建出来再写。",
)

_DECISIONS_ZH = (
    "有一点我不太确定：同一毫秒创建的两条记录顺序不稳定。我加上了 id 作为第二排序键，"
    "如果大家有不同意见请告诉我。",
    "注意：另一个任务也会修改 {file}，所以我只改了函数体，没有动 import。你要改同一个文件的话"
    "请先拉一下最新代码，不然冲突会出现在 import 那一段。",
    "还有一个问题：客户名里有中文的时候，Excel 默认按本地编码打开文件，会显示成乱码。"
    "我查了一下，在文件开头加上 UTF-8 的 BOM 就能解决，其他工具读的时候也不受影响。",
    "我没有改错误信息的措辞，因为有一个客户端是按错误文本做匹配的，改了会出问题。"
    "这个可以单独开一个任务，并在 CHANGELOG 里写明。",
    "导出到一半出错的时候，响应已经开始发送了，状态码改不了。我现在会在最后写一行说明哪里失败了，"
    "客户端的测试也会检查这一行，详细信息记在日志里。",
    "另外，以 =、+ 或 - 开头的值现在是原样写出的，表格软件会把它当成公式。加引号更安全，"
    "但会影响其他工具读取的结果，所以我建议单独开一个任务讨论。",
)

_NEXT_ZH = (
    "接下来我会补上 {function} 的文档字符串，再加一个中途失败的测试，预计一个小时内完成。",
    "如果想复现：切到这个分支，用 -k boundary 跑那个测试，可以看到第二页少了一行。修复之后，"
    "测试会检查分页边界两边的 id 是否完全一致。",
    "还没做的：{function} 的文档里字段顺序和模型不一致，我打算等字段顺序定下来之后一起改，"
    "免得改两次。",
    "分支已经推上去了，提交信息里列出了改动的文件。如果没有别的安排，我就去做看板上下一个待办任务。",
)

_REPORT_ZH = (
    (_CHANGED_ZH, 2),
    (_CODE_ZH, 2),
    (_TESTED_ZH, 4),
    (_MEASURED_ZH, 1),
    (_DECISIONS_ZH, 6),
    (_NEXT_ZH, 2),
)

_CLOSERS_ZH = ("有问题随时找我。", "辛苦大家了。", "")

#: Every paragraph a result can hold (the bulk text of tool results is cut from these).
_RESULT_PARTS = tuple(p for bank, _ in (*_REPORT_EN, *_REPORT_ZH) for p in bank if "```" not in p)

_TASK_DETAIL = (
    "Done when {test} covers the new behaviour and the full suite is green.",
    "Only {file} should need to change; say so in the team if that turns out wrong.",
    "Keep the public signature of {function} as it is; callers outside this repo use it.",
    "Paste the test summary line in your report.",
    "Ask {lead} before adding a dependency.",
)


#: The share of messages (other than kick-offs) that are one-liners.
SHORT_SHARE = 0.1
#: The other messages' median against the median of all: their lengths are lognormal
#: (sigma 0.6), and the median of all is their 44th percentile (exp(0.6 * 0.14)).
_LONG_MEDIAN = 1.09


class Texts:
    """Draws a team's prompts, task descriptions and messages from the banks above."""

    def __init__(self, rng: random.Random, project: Project = EXPORT) -> None:
        self._rng = rng
        self.project = project
        #: The point the last question raised, so the next answer answers it.
        self._asked: int | None = None
        #: The share of messages drawn as one-liners, and of reports drawn in Chinese
        #: (a scripted team says which of its messages are).
        self.one_liners = SHORT_SHARE
        self.chinese_reports = 0.25

    def _names(self, scope: str | None = None) -> dict[str, str]:
        """The project's names one text uses: ``file`` is ``scope`` when given (the file
        the task is about), ``other`` always another file."""
        p = self.project
        rng = self._rng
        files = rng.sample(p.files, 2)
        file = scope or files[0]
        return {
            "file": file,
            "other": files[1] if files[1] != file else files[0],
            "test": rng.choice(p.tests),
            "function": rng.choice(p.functions),
            "goal": p.goal,
        }

    def _fill(self, template: str, *, scope: str | None = None, **names: str) -> str:
        """``template`` with the project's names (drawn for it alone)."""
        return template.format(**{**self._names(scope), **names})

    def prompt(self, request: str, *, context: bool = True) -> str:
        """A human prompt: the request, then (with ``context``) a line or two of context."""
        if not context:
            return request
        extra = self._rng.sample(_PROMPT_CONTEXT, self._rng.randint(1, 2))
        return request + "\n\n" + " ".join(self._fill(t) for t in extra)

    def status_prompt(self) -> str:
        return self._fill(self._rng.choice(STATUS_PROMPTS))

    def follow_up(self, taken: Sequence[str] = ()) -> str:
        """The next follow-up task's subject, one the board does not hold yet."""
        for subject in self.project.follow_ups:
            if subject not in taken:
                return subject
        first = self.project.follow_ups[0]
        return f"{first} (round {len(taken) + 1})"

    def task_description(self, subject: str, author: str) -> str:
        details = self._rng.sample(_TASK_DETAIL, 2)
        return f"{subject}. Filed by {author}. " + " ".join(
            self._fill(t, lead="the lead") for t in details
        )

    def message(
        self,
        sender: str,
        target: str,
        *,
        topic: str = "progress",
        median: int = 1800,
        most: int = 8000,
        chinese: bool | None = None,
        task: str = "the current task",
        scope: str | None = None,
    ) -> str:
        """A team message about ``topic`` (kickoff, question, answer, progress, report)
        on ``task`` (whose files are ``scope``) from ``sender`` to ``target``, of a
        realistic length: one is drawn (median ``median``), then the message's parts are
        written in the order people write them until it is that long."""
        rng = self._rng
        results = topic in ("progress", "report")
        # Chinese is drawn for results only: the Chinese banks report work done.
        zh = (results and rng.random() < self.chinese_reports) if chinese is None else chinese
        # About one message in ten is a one-liner (an acknowledgement, a claim, a quick
        # result; a kick-off never is). The others are drawn that much longer, so that
        # the median of all of them is ``median``.
        if topic != "kickoff" and rng.random() < self.one_liners:
            return self.short(chinese=zh)
        length = lognormal(rng, int(median * _LONG_MEDIAN), 0.6, 40, most)
        if length < 260:
            return self.short(chinese=zh)
        opener: Sequence[str]
        closer: Sequence[str]
        parts: list[str]
        if zh:
            length = length * 4 // 5  # a Chinese character says more than a letter does
            opener, parts, closer = _OPENERS_ZH, self._report(_REPORT_ZH, length), _CLOSERS_ZH
        elif topic == "kickoff":
            opener, closer = _OPENERS_EN[topic], _CLOSERS_KICKOFF
            parts = [_KICKOFF_EN[0], *(p for p in _KICKOFF_EN[1:] if rng.random() < 0.9)]
        elif topic == "question":
            opener, closer = _OPENERS_EN[topic], _ASK_CLOSERS_EN
            asked = rng.sample(range(len(_QUESTION_EN)), rng.randint(1, 2))
            self._asked = asked[0]
            context = rng.sample(_ASK_CONTEXT_EN, len(_ASK_CONTEXT_EN))
            # Where the asker is and what they have so far, the question, what they
            # would do, then more context.
            parts = [
                context[0],
                rng.choice(_ASK_CODE_EN),
                *(_QUESTION_EN[i] for i in asked),
                *rng.sample(_ASK_PROPOSAL_EN, len(_ASK_PROPOSAL_EN)),
                *context[1:],
            ]
        elif topic == "answer":
            opener, closer = _OPENERS_EN[topic], _CLOSERS_EN
            point = self._asked if self._asked is not None else rng.randrange(len(_ANSWER_EN))
            more = rng.sample(_ANSWER_MORE_EN, len(_ANSWER_MORE_EN))
            code = rng.sample(_ANSWER_CODE_EN, 2)
            parts = [_ANSWER_EN[point], code[0], more[0], *more[1:3], code[1], *more[3:]]
        else:
            opener, parts, closer = (
                _OPENERS_EN[topic],
                self._report(_REPORT_EN, length),
                _CLOSERS_EN,
            )
        # One message talks about one file, one function, one test throughout.
        names = {**self._names(scope), "target": target, "task": task}
        written = [rng.choice(opener).format(**names)]
        size = len(written[0])
        for part in parts:
            if size >= length and len(written) > 1:
                break
            written.append(part.format(**names))
            size += len(written[-1]) + 2
        ending = rng.choice(closer).format(**names)
        if ending:
            written.append(ending)
        written.append(f"— {sender}")
        return "\n\n".join(written)

    def _report(self, sections: Sequence[tuple[Sequence[str], int]], length: int) -> list[str]:
        """A report's paragraphs, about ``length`` characters of them: one from each
        section in turn (the first always, the others mostly), then more from sections
        picked at random until it is that long. Never the same paragraph twice."""
        rng = self._rng
        shuffled = [rng.sample(bank, min(most, len(bank))) for bank, most in sections]
        counts = [1 if index == 0 or rng.random() >= 0.1 else 0 for index in range(len(sections))]
        size = sum(len(p) for paras, n in zip(shuffled, counts, strict=True) for p in paras[:n])
        while size < length:
            room = [i for i, paras in enumerate(shuffled) if counts[i] < len(paras)]
            if not room:
                break
            pick = rng.choice(room)
            size += len(shuffled[pick][counts[pick]])
            counts[pick] += 1
        return [p for paras, n in zip(shuffled, counts, strict=True) for p in paras[:n]]

    def short(self, *, chinese: bool = False) -> str:
        """A one-line reply: an acknowledgement, a claim, a quick result."""
        return self._fill(self._rng.choice(_SHORT_ZH if chinese else _SHORT_EN))

    def paste(self, at_least: int) -> str:
        """A long paste (a test run's output with notes), newlines kept."""
        rng = self._rng
        parts: list[str] = ["Full output of the failing run, with my notes inline:"]
        size = len(parts[0])
        n = 0
        while size <= at_least:
            n += 1
            test = rng.choice(self.project.tests)
            block = (
                f"```\n{test}::test_case_{n:03d} FAILED\n"
                f"E   AssertionError: expected {rng.randint(10, 999)} rows, got "
                f"{rng.randint(10, 999)}\n```\n" + self._fill(rng.choice(_RESULT_PARTS))
            )
            parts.append(block)
            size += len(block) + 2
        return "\n\n".join(parts)

    def corpus_line(self) -> str:
        """One line of the bulk text tool results and assistant turns are sliced from."""
        return self._fill(self._rng.choice(_RESULT_PARTS))

"""What the generated teams write: phrase banks and templates for human prompts, task
descriptions and team messages, so a bundled team reads like people doing a small job.

A :class:`Project` names the job (its files, test, function); :class:`Texts` draws
from the banks with the ``random.Random`` it is given, so output stays deterministic.
Message lengths follow real teams: median about 1,800 characters, some one-liners;
about one report in four is written in Chinese.
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
        "Status update on my task.",
        "{target}, here is where I am.",
        "Halfway there; notes so far.",
    ),
    "report": (
        "Done with my task. Summary below.",
        "{target}, the change is ready for review.",
        "Finished. Here is what changed and how I checked it.",
    ),
}

_KICKOFF_EN = (  # in the order a lead would write them
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
    "Constraints: no new dependencies without asking, keep memory flat on big inputs (never "
    "hold the whole result in a list), and keep every public signature as it is.",
    "Done means: {test} covers the new behaviour, the full suite is green, and ruff and "
    "mypy are clean. Paste the pytest summary line in your report, not just 'tests pass'.",
    "Order of work, as I see it: the pieces that touch different files go in parallel; the "
    "tests wait for them but can start from the fixtures today; the docs come last, once "
    "the names are settled. If you finish early, take the next pending task.",
    "Claim the task on the board before you start so the others can see who is on it, and "
    "message me if you are blocked for more than a few minutes. Questions to each other "
    "are fine too; you don't need to go through me.",
)

_QUESTION_EN = (
    "Does {function} need to keep accepting its old argument? I see one caller in {file} "
    "that still passes it positionally, and I would rather not break it by accident.",
    "What should happen on an empty result: an empty body, or just the header line? I would "
    "say header only, so whatever opens it still sees the columns.",
    "Are you changing {file} right now? I need to add two lines there and don't want us "
    "both to end up resolving the same conflict.",
    "Is it fine if {test} builds its data with a small factory instead of the big JSON "
    "fixture? The fixture is 4 MB and makes the test take several seconds.",
    "Which order do you want the fields in? I would follow the model, but the docs list them "
    "differently and I don't know which one clients rely on.",
)

_ANSWER_EN = (
    "Keep the old argument for now, but say in the docstring that it is deprecated; we drop "
    "it once the callers in {file} are migrated, in a separate change.",
    "Header only on an empty result. That is what the list endpoint's clients expect as "
    "well, and it keeps the output self-describing.",
    "I am done with {file} for today, go ahead. I pushed my last change ten minutes ago, so "
    "pull first and you should not see a conflict.",
    "Use the factory. The JSON fixture predates the last model change and half of its "
    "fields are stale anyway; I would not build new tests on it.",
    "Follow the model's order. The docs are out of date there; I will fix them as part of "
    "my task and mention it in the changelog.",
)

_RESULT_EN = (
    "I read through {file} first. {function} does more than its name says: it also "
    "decides what to do with malformed input, and two callers rely on that. I kept that "
    "behaviour and moved the parsing into a helper so the happy path reads top to bottom.",
    "The plan: change {function} so it takes the already-parsed rows instead of the raw "
    "request, add the new code path behind it, and keep the old signature as a thin "
    "wrapper until the callers in {file} are migrated. That keeps the diff reviewable.",
    "Tests: I added four cases to {test} — the empty case, a single row, a row with a "
    "comma and a quote in it, and a page boundary. The last one caught an off-by-one in "
    "the loop that has probably been there since the first version.",
    "One thing I am not sure about is the ordering. Right now we sort by creation time, "
    "but two records created in the same millisecond come out in database order, which "
    "is not stable. I would add the id as a tie-breaker unless someone objects.",
    "I ran the whole suite locally: everything passes, and ruff and mypy are clean. The "
    "slowest test is still the one that builds a large fixture; it takes about 2.4 s on "
    "my machine, which is fine for now but worth a look later.",
    "Heads-up: {file} is also touched by the other task, so I only changed the function "
    "body and left the imports alone. If you need to edit the same file, pull first; the "
    "conflict would be in the import block otherwise.",
    "I measured before and after on the sample data (12,000 rows): 410 ms before, 95 ms "
    "after, and peak memory went from 180 MB to 22 MB because we no longer build the "
    "whole list before writing it out.",
    "What I did not do: I left the error messages as they were, because changing their "
    "wording would break the client that matches on them. That deserves its own task "
    "with a note in the changelog.",
    "Edge cases I checked by hand: an empty result, a value with a newline in it, a name "
    "with non-ASCII letters (Zoë, 王芳), and a request that times out halfway. All four "
    "behave; the last one now returns a clear error instead of a truncated file.",
    "I looked at how {function} is called from {file}. There are three call sites; two "
    "pass keyword arguments and one passes positionals, so I made the new parameter "
    "keyword-only to avoid silently shifting the positional one.",
    "Review notes for whoever picks this up next: the naming in {file} is inconsistent "
    "(some helpers say rows, others say records). I did not rename anything in this "
    "change to keep the diff small, but it would be a cheap clean-up.",
    "If you want to reproduce it: check out the branch, run the test with -k boundary, "
    "and watch the second page start one row too late. With the fix it starts at the "
    "right row and the test asserts the exact ids on both sides of the boundary.",
)

_CODE_EN = (
    "The core of it:\n\n```python\ndef {function}(rows, *, page_size=500):\n"
    "    for start in range(0, len(rows), page_size):\n"
    "        yield from rows[start : start + page_size]\n```",
    "The test that caught it:\n\n```python\ndef test_page_boundary_keeps_every_row():\n"
    "    rows = make_rows(1001)\n"
    "    assert [r.id for r in {function}(rows)] == [r.id for r in rows]\n```",
    "Output of the run:\n\n```\n$ pytest -q {test}\n........................\n"
    "24 passed in 1.87s\n```",
    "The diff is small:\n\n```diff\n-    items = sorted(items, key=lambda i: i.created_at)\n"
    "+    items = sorted(items, key=lambda i: (i.created_at, i.id))\n```",
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
    "{target}，同步一下进度。",
    "我这边的任务做完了，总结如下。",
)

_BODY_ZH = (
    "我先看了 {file}，{function} 除了解析输入以外还负责处理格式错误的数据，有两个调用方依赖"
    "这个行为，所以我保留了它，只是把解析部分拆成了一个单独的函数。",
    "测试方面，我在 {test} 里加了四个用例：空输入、只有一行、字段里带逗号和引号、以及分页边界。"
    "最后一个用例发现了循环里的一个差一错误。",
    "全部测试在本地都通过了，ruff 和 mypy 也没有报错。最慢的测试大概 2.4 秒，暂时可以接受。",
    "有一点我不太确定：同一毫秒创建的两条记录顺序不稳定。我打算加上 id 作为第二排序键，"
    "如果大家没有意见我就这么改。",
    "注意：另一个任务也会修改 {file}，所以我只改了函数体，没有动 import。你要改同一个文件的话"
    "请先拉一下最新代码。",
    "用示例数据（12,000 行）测了一下：改之前 410 毫秒，改之后 95 毫秒，"
    "峰值内存从 180 MB 降到 22 MB。",
    "还有一个问题：客户名里有中文的时候，Excel 默认按本地编码打开文件，会显示成乱码。"
    "我查了一下，在文件开头加上 UTF-8 的 BOM 就能解决，其他工具读的时候也不受影响。",
    "我没有改错误信息的措辞，因为有一个客户端是按错误文本做匹配的，改了会出问题。"
    "这个可以单独开一个任务，并在 CHANGELOG 里写明。",
    "边界情况我手动验证过：空结果、字段里有换行、名字里有非 ASCII 字符（Zoë、王芳），"
    "以及请求中途超时。前三个都正常，最后一个现在会返回明确的错误，而不是一个被截断的文件。",
    "{function} 一共有三处调用：两处用关键字参数，一处用位置参数。为了避免位置参数被悄悄错位，"
    "我把新参数设成了仅限关键字参数。",
)

_CODE_ZH = (
    "核心改动如下：\n\n```python\ndef {function}(rows, *, page_size=500):\n"
    "    for start in range(0, len(rows), page_size):\n"
    "        yield from rows[start : start + page_size]\n```",
    "本地运行结果：\n\n```\n$ pytest -q {test}\n........................\n24 passed in 1.87s\n```",
)

_CLOSERS_ZH = ("有问题随时找我。", "接下来我去做下一个待办任务。", "")

_TASK_DETAIL = (
    "Done when {test} covers the new behaviour and the full suite is green.",
    "Only {file} should need to change; say so in the team if that turns out wrong.",
    "Keep the public signature of {function} as it is; callers outside this repo use it.",
    "Paste the test summary line in your report.",
    "Ask {lead} before adding a dependency.",
)


_TOPIC_BANKS = {
    "kickoff": _KICKOFF_EN,
    "question": _QUESTION_EN,
    "answer": _ANSWER_EN,
    "progress": _RESULT_EN,
    "report": _RESULT_EN,
}


class Texts:
    """Draws a team's prompts, task descriptions and messages from the banks above."""

    def __init__(self, rng: random.Random, project: Project = EXPORT) -> None:
        self._rng = rng
        self.project = project
        #: The point the last question raised, so the next answer answers it.
        self._asked: int | None = None

    def _fill(self, template: str, *, scope: str | None = None, **names: str) -> str:
        """``template`` with the project's names; ``{file}`` is ``scope`` when given (the
        file the task is about), ``{other}`` always another file."""
        p = self.project
        rng = self._rng
        files = rng.sample(p.files, 2)
        file = scope or files[0]
        return template.format(
            file=file,
            other=files[1] if files[1] != file else files[0],
            test=rng.choice(p.tests),
            function=rng.choice(p.functions),
            goal=p.goal,
            **names,
        )

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
        realistic length."""
        rng = self._rng
        results = topic in ("progress", "report")
        # Chinese is drawn for results only: the Chinese bank reports work done.
        zh = (results and rng.random() < 0.25) if chinese is None else chinese
        length = lognormal(rng, median, 0.6, 40, most)
        if length < 260:
            return self.short(chinese=zh)
        opener: Sequence[str]
        bank: Sequence[str]
        code: Sequence[str]
        closer: Sequence[str]
        if zh:
            opener, bank, code, closer = _OPENERS_ZH, _BODY_ZH, _CODE_ZH, _CLOSERS_ZH
            length = length // 2  # a Chinese character says what two or three letters do
        else:
            opener, bank, code, closer = (
                _OPENERS_EN[topic],
                _TOPIC_BANKS[topic],
                _CODE_EN if results else (),
                _CLOSERS_KICKOFF if topic == "kickoff" else _CLOSERS_EN,
            )
        parts = [self._fill(rng.choice(opener), scope=scope, target=target, task=task)]
        size = len(parts[0])
        # A question or an answer is about one or two points, with results as context;
        # a kickoff is the plan alone. Never the same paragraph twice.
        pool = rng.sample(bank, len(bank))
        if topic == "kickoff" and not zh:
            pool = [bank[0], *(p for p in bank[1:] if rng.random() < 0.9)]
        if topic in ("question", "answer") and not zh:
            if topic == "question":
                self._asked = bank.index(pool[0])
            elif self._asked is not None:
                point = bank[self._asked]
                pool = [point, *(p for p in pool if p is not point)]
            pool = pool[: rng.randint(1, 2)] + rng.sample(_RESULT_EN, len(_RESULT_EN))
        snippets = rng.sample(code, len(code))
        for body in pool:
            if size >= length:
                break
            parts.append(self._fill(body, scope=scope, task=task))
            size += len(parts[-1]) + 2
            if snippets and size < length and rng.random() < 0.35:
                parts.append(self._fill(snippets.pop(), scope=scope))
                size += len(parts[-1]) + 2
        ending = self._fill(rng.choice(closer))
        if ending:
            parts.append(ending)
        parts.append(f"— {sender}")
        return "\n\n".join(parts)

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
                f"{rng.randint(10, 999)}\n```\n" + self._fill(rng.choice(_RESULT_EN))
            )
            parts.append(block)
            size += len(block) + 2
        return "\n\n".join(parts)

    def corpus_line(self) -> str:
        """One line of the bulk text tool results and assistant turns are sliced from."""
        return self._fill(self._rng.choice(_RESULT_EN + _BODY_ZH))

"""The live demo's job, phase after phase: what the team works on next, never the same
task twice, for as long as the demo runs.

A phase is one step of a job on one part of the invoices API (its CSV export, its
filters, its scheduled reports, …), with its own files, tests and functions, so the
team's messages move on with the work; its tasks depend on each other (the first
unblocks the middle ones, which unblock the last). The phases go through every job for
one resource, then the next resource; after the last, the same jobs again for the next
API version. Every subject names its resource, job and version: none repeats. The
bundled team already did the first job (the invoices' CSV export): the story goes on
from there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dsh_task_gantt.fixturegen.texts import Project


@dataclass(frozen=True, slots=True)
class Resource:
    name: str  # plural, in prose: "credit notes"
    slug: str  # in paths: "credit_notes"
    one: str  # singular, in names: "credit_note"


RESOURCES = tuple(
    Resource(name, name.replace(" ", "_"), one)
    for name, one in (
        ("invoices", "invoice"),
        ("credit notes", "credit_note"),
        ("customers", "customer"),
        ("payments", "payment"),
        ("refunds", "refund"),
        ("subscriptions", "subscription"),
        ("tax rates", "tax_rate"),
        ("payouts", "payout"),
        ("disputes", "dispute"),
        ("price lists", "price_list"),
        ("coupons", "coupon"),
        ("statements", "statement"),
    )
)

#: The jobs on one resource, in the order a team does them: a name, a key for its
#: files, and its tasks (the first unblocks the middle ones, they unblock the last).
JOBS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "CSV export of {name}",
        "export",
        (
            "Write the {name} CSV rows with a fixed column order",
            "Stream the {name} CSV from /{slug}/export in pages of 500",
            "Quote commas and newlines in {name} text fields",
            "Test the {name} export on an empty table and on 10,000 rows",
        ),
    ),
    (
        "filters for {name}",
        "filters",
        (
            "Parse the date-range filter of /{slug}",
            "Filter {name} by customer id and status",
            "Answer an unknown filter on /{slug} with a 400 that names it",
            "Test every {name} filter against the fixtures",
        ),
    ),
    (
        "scheduled reports of {name}",
        "reports",
        (
            "Add the nightly job that writes the {name} report",
            "Keep the last 30 {name} reports and delete older ones",
            "Send a link when the {name} report is ready",
            "Test the {name} report job with a frozen clock",
        ),
    ),
    (
        "speed of /{slug}",
        "speed",
        (
            "Measure /{slug} with 100,000 rows and keep the numbers",
            "Add the index the {name} listing query needs",
            "Cache the {name} counts for a minute",
            "Compare /{slug} before and after in the pull request",
        ),
    ),
    (
        "permissions on {name}",
        "access",
        (
            "List who may read and who may change {name}",
            "Check the caller's role on every /{slug} route",
            "Hide other accounts' {name} from the listing",
            "Test the {name} routes as a reader, an editor and a stranger",
        ),
    ),
    (
        "audit trail of {name}",
        "audit",
        (
            "Record who changed which {one} and when",
            "Show a {one}'s changes at /{slug}/{{id}}/history",
            "Keep {name} audit entries for seven years",
            "Test that every {one} change leaves an audit entry",
        ),
    ),
    (
        "release of the {name} changes",
        "release",
        (
            "Write the changelog entry for the {name} changes",
            "Run the {name} migration on a copy of production",
            "Update docs/api/{slug}.md for the new fields",
            "Announce the {name} changes to support with examples",
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Phase:
    #: "CSV export of credit notes" (API v2 and later: "… (API v2)").
    title: str
    project: Project
    #: The phase's tasks in order; ``blocked_by[i]`` are the indexes task ``i`` waits for.
    subjects: tuple[str, ...]
    blocked_by: tuple[tuple[int, ...], ...]


def _chain(count: int) -> tuple[tuple[int, ...], ...]:
    """The first task unblocks the middle ones; the last waits for all the middle ones."""
    if count < 3:
        return tuple(() if i == 0 else (i - 1,) for i in range(count))
    middle = tuple(range(1, count - 1))
    return ((), *(((0,),) * len(middle)), middle)


def _project(resource: Resource, key: str, title: str) -> Project:
    slug, one = resource.slug, resource.one
    return Project(
        goal=title,
        files=(
            f"app/routes/{slug}.py",
            f"app/{key}/{slug}.py",
            f"app/db/{slug}_queries.py",
            f"app/models/{one}.py",
            f"docs/api/{slug}.md",
            f"tests/fixtures/{slug}.json",
        ),
        tests=(f"tests/test_{slug}_{key}.py", f"tests/test_{slug}_routes.py"),
        functions=(f"list_{slug}", f"{one}_rows", f"{key}_{slug}", f"load_{one}"),
        follow_ups=(),
    )


def phases() -> Iterator[Phase]:
    """Every phase of the job, in order, without end."""
    version = 1
    while True:
        suffix = "" if version == 1 else f" (API v{version})"
        for resource in RESOURCES:
            names = {"name": resource.name, "slug": resource.slug, "one": resource.one}
            for title_template, key, tasks in JOBS:
                if version == 1 and resource == RESOURCES[0] and key == "export":
                    continue  # the bundled story's own job
                title = title_template.format(**names)
                subjects = tuple(t.format(**names) + suffix for t in tasks)
                yield Phase(
                    title + suffix,
                    _project(resource, key, title + suffix),
                    subjects,
                    _chain(len(subjects)),
                )
        version += 1


#: What the human asks a live team now and then, about the work at hand.
LIVE_PROMPTS = (
    "How far along is “{task}”? One line is enough.",
    "Is anything blocking “{task}”? If {file} is the problem, say so.",
    "When “{task}” is done, please post the test summary line.",
    "Before the {phase} goes further: are the tests green on main?",
    "Can someone double-check {function} against an empty input?",
    "“{task}”进展怎么样？有阻塞的地方就直接说。",
    "Does the {phase} change how {file} behaves today?",
)

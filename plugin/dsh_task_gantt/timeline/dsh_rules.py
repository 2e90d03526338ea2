"""Where DSH's own team projection would refuse the team (docs/host-contract.md §7), in words.

DSH stops projecting a team at the first event that breaks its rules; a viewer keeps
drawing what was read (§4, §6) and says so in one note. What the folds keep lets us
see most of the rules: members (first phase, name changes, phase changes, shared
names), messages (queued or delivered twice, delivered without a queue record) and
the task board (revisions, the dependency graph). Event ``version`` is not kept by the
fold, so a record of another version is not reported here.
"""

from __future__ import annotations

from .model import Model
from .task_graph import names, task_refusals


def _member_refusals(model: Model) -> list[str]:
    lead = model.roster.lead
    seen: dict[str, tuple[str | None, str | None]] = {}  # id -> (name, phase)
    by_name: dict[str, str] = {}
    late, renamed, twice, shared = [], [], [], []
    for seq, rec in sorted(lead.fold.members.items()):
        if seq < lead.cut or not model.roster.ours(rec.team_id):
            continue
        prior = seen.get(rec.id)
        label = rec.name or rec.id
        if prior is None:
            if rec.phase != "provisioning":
                late.append(label)
        else:
            if prior[0] != rec.name:
                renamed.append(f"{prior[0] or rec.id} to {label}")
            if prior[1] != "provisioning" or rec.phase == "provisioning":
                twice.append(f"{label} went {prior[1]} to {rec.phase}")
        if rec.name is not None:
            other = by_name.setdefault(rec.name, rec.id)
            if other != rec.id:
                shared.append(rec.name)
        seen[rec.id] = (rec.name, rec.phase)
    reasons = []
    if late:
        reasons.append(f"{names(late)} did not begin provisioning")
    if renamed:
        reasons.append(f"a member renamed ({names(renamed)})")
    if twice:
        reasons.append(f"a member phase changed twice ({names(twice)})")
    if shared:
        reasons.append(f"two members share a name ({names(sorted(set(shared)))})")
    return reasons


def dsh_refusals(model: Model) -> list[str]:
    """Every rule of DSH's projection this team breaks, as far as the folds show."""
    reasons = _member_refusals(model)
    if model.duplicate_queued:
        reasons.append("a message queued twice")
    if model.duplicate_delivered:
        reasons.append("a message delivered twice")
    if model.counts.messages["no queue record"]:
        reasons.append("a message delivered without being queued")
    reasons.extend(task_refusals(model.replay, model.graph))
    return reasons

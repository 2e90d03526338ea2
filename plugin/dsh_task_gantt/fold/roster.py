"""Members known from the lead's log: ``team/member`` ∪ ``subagent/catalog`` (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from .records import LaneFold, MemberRec


@dataclass(frozen=True, slots=True)
class MemberHint:
    id: str
    #: Latest ``team/member`` name; ``None`` when only the catalog knows the member.
    name: str | None
    #: Every name ever seen for this member, in log order.
    aliases: tuple[str, ...]
    phase: str | None
    error: str | None
    description: str | None
    context: str | None
    #: The catalog's ``childCreatedAt`` (the best lane start time).
    created_at: int | None
    first_seq: int
    #: The latest catalog ``label``: what the child was asked to do.
    label: str | None = None


def member_hints(
    lead: LaneFold, cut: int = 0, team_ids: frozenset[str] | None = None
) -> list[MemberHint]:
    """Hints from records with ``seq >= cut``, in order of first appearance.

    With ``team_ids``, a ``team/member`` record whose ``teamId`` is another team's
    (an ancestor's, inherited) is not this team's; one without a ``teamId`` is."""
    first: dict[str, int] = {}
    names: dict[str, list[str]] = {}
    latest: dict[str, MemberRec] = {}
    latest_name: dict[str, str] = {}
    created: dict[str, int] = {}
    labels: dict[str, str] = {}
    for seq, member in sorted(lead.members.items()):
        if seq < cut or member.id == member.team_id:
            continue  # the lead itself is not a teammate
        if team_ids is not None and member.team_id is not None and member.team_id not in team_ids:
            continue
        first.setdefault(member.id, seq)
        if member.name is not None and member.name not in names.setdefault(member.id, []):
            names[member.id].append(member.name)
        if member.name is not None:
            latest_name[member.id] = member.name
        latest[member.id] = member
    for seq, entry in sorted(lead.catalog.items()):
        if seq < cut:
            continue
        if entry.child_id not in first or seq < first[entry.child_id]:
            first[entry.child_id] = seq
        if entry.created_at is not None:
            created.setdefault(entry.child_id, entry.created_at)
        if entry.label:
            labels[entry.child_id] = entry.label
    hints: list[MemberHint] = []
    for member_id, first_seq in sorted(first.items(), key=lambda item: (item[1], item[0])):
        last = latest.get(member_id)
        hints.append(
            MemberHint(
                id=member_id,
                name=latest_name.get(member_id),
                aliases=tuple(names.get(member_id, ())),
                phase=last.phase if last else None,
                error=last.error if last else None,
                description=last.description if last else None,
                context=last.context if last else None,
                created_at=created.get(member_id),
                first_seq=first_seq,
                label=labels.get(member_id),
            )
        )
    return hints


def roster_hints(lead: LaneFold, team_id: str | None = None) -> list[MemberHint]:
    """Members known from the lead's log, in order of first appearance (of the team
    ``team_id`` when given)."""
    try:
        return member_hints(lead, team_ids=frozenset({team_id}) if team_id else None)
    except Exception:  # total by contract; a fold is built by us, so this is defensive
        return []

"""Everything derived from a snapshot, built once per request: the roster, every
lane's spans, the messages' details, the tasks, and the counts the notes report."""

from __future__ import annotations

from ..fold.text import text
from .counts import Counts
from .details import MessageDetails
from .inputs import TeamSnapshot
from .messages import draw_messages
from .roster import Lane, Roster
from .spans import draw_prompts, draw_turns
from .tasks import place_tasks
from .tokens import LaneTokens, lane_tokens


class Model:
    def __init__(self, team: TeamSnapshot) -> None:
        self.team = team
        self.counts = Counts()
        self.notes: list[str] = [n for n in (text(s, 4096) for s in team.service_notes) if n]
        self.roster = Roster(team, self.counts.foreign)
        #: Each drawn message's and prompt's detail, by id.
        self.message_details = MessageDetails()
        # The order matters: the first span of an id on a lane wins.
        draw_turns(self.roster, self.counts)
        briefs = draw_prompts(self.roster, self.counts, self.message_details)
        pairing = draw_messages(self.roster, self.counts, self.message_details, briefs)
        self.duplicate_queued = pairing.duplicate_queued
        self.duplicate_delivered = pairing.duplicate_delivered
        placed = place_tasks(self.roster, team)
        self.replay = placed.replay
        self.tasks = placed.tasks
        self.deleted = placed.deleted
        self.orphaned_owner = placed.orphaned_owner
        self.graph = placed.graph
        #: Each lane's token use, by lane id.
        self.tokens: dict[str, LaneTokens] = {
            lane.id: lane_tokens(
                lane.fold, lane.cut, (lane.id, lane.session_id), owner=lane.session_id
            )
            for lane in self.roster.lanes
        }

    @property
    def lanes(self) -> list[Lane]:
        return self.roster.lanes

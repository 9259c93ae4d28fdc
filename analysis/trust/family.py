"""The escape room as the viewer and the trust card see it (:mod:`analysis.families`)."""

from __future__ import annotations

from analysis.families import CardSection, Family, ViewPage, register_family
from analysis.trust import card
from analysis.view.escape_room import escape_room_page

FAMILY = register_family(
    Family(
        game=card.GAME,
        title="Escape room",
        view=ViewPage(escape_room_page),
        card=CardSection(
            heading="Escape room: trust formation, breakage, recovery, targeting",
            keys=card.KEYS,
            figures=card.figures,
            invalid=card.invalid,
            subjects=card.subjects,
            provenance=card.provenance,
        ),
        order=10,
    )
)

"""The escape room as the viewer and the trust card see it (:mod:`analysis.family_registry`)."""

from __future__ import annotations

from analysis.escape_room import card
from analysis.family_registry import CardSection, FamilyDeclaration, ViewPage, register_family
from analysis.view.escape_room import escape_room_page

FAMILY = register_family(
    FamilyDeclaration(
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

"""The arena as the viewer and the trust card see it (:mod:`analysis.families`)."""

from __future__ import annotations

from analysis.arena import card
from analysis.families import CardSection, Family, ViewPage, register_family
from analysis.view.families import arena_page

FAMILY = register_family(
    Family(
        game=card.GAME,
        title="Arena (iterated PD)",
        view=ViewPage(arena_page),
        card=CardSection(
            heading="Arena: iterated prisoner's dilemma against the scripted players",
            keys=card.KEYS,
            figures=card.figures,
            invalid=card.invalid,
        ),
        order=30,
    )
)

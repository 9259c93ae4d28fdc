"""The arena as the viewer and the trust card see it (:mod:`analysis.family_registry`)."""

from __future__ import annotations

from analysis.arena import card
from analysis.family_registry import CardSection, FamilyDeclaration, ViewPage, register_family
from analysis.view.family_pages import arena_page

FAMILY = register_family(
    FamilyDeclaration(
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

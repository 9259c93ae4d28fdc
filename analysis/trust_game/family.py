"""The trust game as the viewer and the trust card see it (:mod:`analysis.family_registry`)."""

from __future__ import annotations

from analysis.family_registry import CardSection, FamilyDeclaration, ViewPage, register_family
from analysis.trust_game import card
from analysis.view.family_pages import trust_game_page

FAMILY = register_family(
    FamilyDeclaration(
        game=card.GAME,
        title="Trust game",
        view=ViewPage(trust_game_page),
        card=CardSection(
            heading="Trust game (Berg et al. 1995) against tg_human",
            keys=card.KEYS,
            figures=card.figures,
            invalid=card.invalid,
            llm_run=card.llm_run,
        ),
        order=40,
    )
)

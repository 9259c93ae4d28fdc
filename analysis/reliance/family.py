"""The reliance scenarios as the viewer and the trust card see them (:mod:`analysis.family_registry`)."""

from __future__ import annotations

from analysis.family_registry import CardSection, FamilyDeclaration, ViewPage, register_family
from analysis.reliance import card
from analysis.view.family_pages import reliance_page

FAMILY = register_family(
    FamilyDeclaration(
        game=card.GAME,
        title="Reliance",
        view=ViewPage(reliance_page),
        card=CardSection(
            heading="Reliance: delegate, test, support or back up (exact oracle)",
            keys=card.KEYS,
            figures=card.figures,
            invalid=card.invalid,
        ),
        order=20,
    )
)

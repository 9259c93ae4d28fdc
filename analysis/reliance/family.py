"""The reliance scenarios as the viewer and the trust card see them (:mod:`analysis.families`)."""

from __future__ import annotations

from analysis.families import CardSection, Family, ViewPage, register_family
from analysis.reliance import card
from analysis.view.families import reliance_page

FAMILY = register_family(
    Family(
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

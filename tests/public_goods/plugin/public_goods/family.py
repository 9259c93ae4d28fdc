"""The public-goods game as the viewer and the trust card see it (``trustsim.analysis`` entry point): a page
of its rounds table and a card section with the mean contribution."""

from __future__ import annotations

from typing import Any

from analysis.card.figures import Figure, from_values, not_run
from analysis.family_registry import CardData, CardSection, FamilyDeclaration, register_family
from analysis.rundirs import discover_runs, read_tables
from analysis.stats import cluster_bootstrap_mean
from analysis.view.family_pages import table_page

GAME = "public_goods"
KEY, LABEL = "pg_contribution", "contribution (share of the endowment)"


def figures(data: CardData) -> Any:
    """Per subject: the mean contribution share over its rounds, with a cluster-bootstrap interval (groups)."""
    rounds = None
    if GAME in data.present:
        runs = [r for r in discover_runs(data.run_paths).runs if r.game == GAME]
        rounds = read_tables(runs, "rounds.csv")
        endowment = {r.run_id: r.manifest["config"]["game"]["endowment"] for r in runs}

    def per_subject(subject: Any) -> dict[str, Figure]:
        if rounds is None or rounds.empty:
            return {KEY: not_run(KEY, LABEL)}
        mine = rounds[[subject.matches(m, a) for m, a in zip(rounds["model"], rounds["agent"], strict=True)]]
        if mine.empty:
            return {KEY: not_run(KEY, LABEL)}
        share = mine["contribution"] / mine["run_id"].map(endowment)
        clusters = (
            mine["run_id"].astype(str) + "/" + mine["session"].astype(str) + "/" + mine["group"].astype(str)
        )
        iv = cluster_bootstrap_mean(
            share.to_numpy(float), clusters.to_numpy(), n_resamples=data.resamples, seed=data.seed
        )
        note = f"{len(mine)} contributions in {iv.n_clusters} groups"
        return {KEY: from_values(KEY, LABEL, iv.estimate, iv.low, iv.high, n=len(mine), note=note)}

    return per_subject


FAMILY = register_family(
    FamilyDeclaration(
        game=GAME,
        title="Public goods",
        view=table_page("rounds"),
        card=CardSection(
            heading="Public goods: what a player puts into the common pot", keys=(KEY,), figures=figures
        ),
        order=90,
    )
)

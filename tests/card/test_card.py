"""``python -m analysis card``: cards from battery sweeps and from the reference logs, cards.csv, compare.html,
and the printed page in a real browser."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.card.browser import BrowserUnavailable, chromium_path, pdf_pages, render
from analysis.card.render import figure_keys

from .conftest import analysis

STATUSES = {"ok", "underpowered", "not run", "not available"}
REFERENCE_MODELS = {
    "claude-opus-4-6", "claude-sonnet-4-6", "gemini-2.5-flash", "gemini-3.1-pro-preview", "gpt-5.1",
    "gpt-5.4-mini-2026-03-17",
}  # fmt: skip
ESCAPE_ROOM = ("delta_trust", "delta_target", "protective_share", "er_regret", "er_regret_self_reliant",
               "er_regret_symmetric")  # fmt: skip
OTHER_FAMILIES = [k for k in figure_keys() if k.startswith(("rel_", "arena_", "tg_", "cal_"))]


def check_cards_csv(path: Path) -> pd.DataFrame:
    cards = pd.read_csv(path)
    for key in figure_keys():
        for suffix in ("", "_low", "_high", "_n", "_status"):
            assert f"{key}{suffix}" in cards.columns, f"{key}{suffix}"
        assert set(cards[f"{key}_status"]) <= STATUSES
        shown = cards[f"{key}_status"].isin(["ok", "underpowered"])
        assert cards.loc[shown, key].notna().all(), key  # a shown figure has a value
        assert cards.loc[~shown, key].isna().all(), key  # a missing one is never a number that reads as 0
    return cards


@pytest.fixture(scope="module")
def offline_card(offline_sweep, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("card_out") / "card"
    proc = analysis("card", str(offline_sweep[0]), "--out", str(out), "--no-figures", "--resamples", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.slow  # a whole battery sweep
def test_offline_card_fills_every_family(offline_card: Path) -> None:
    cards = check_cards_csv(offline_card / "cards.csv")
    assert list(cards["subject"]) == ["offline"]
    row = cards.iloc[0]
    for key in (*ESCAPE_ROOM, "rel_macro_accuracy", "arena_cooperation", "arena_rank", "tg_sent_fraction",
                "tg_return_ratio", "cal_brier", "cal_ece"):  # fmt: skip
        assert row[f"{key}_status"] in ("ok", "underpowered"), key
    assert row["er_regret"] >= 0 and row["er_regret_n"] > 0  # smoke games have 1 round: bayes is not optimal
    for key in ESCAPE_ROOM[-2:]:  # one round: every decision has a fixed point
        assert row[key] >= 0 and row[f"{key}_n"] == row["er_regret_n"], key
    assert row["tg_sent_fraction"] == pytest.approx(0.5)  # tg_reciprocal opens with half its endowment
    assert row["battery_size"] == "smoke, 11 parts" and row["runs"] == 11 and row["kind"] == "battery"
    html = (offline_card / "card_offline.html").read_text(encoding="utf-8")
    assert "@page { size: A4" in html
    assert not re.search(r"""(src|href)=["']https?:""", html)  # self-contained
    assert "model-based" in html and "not the" in html and "exact optimum" in html and "(model v2)" in html
    assert (offline_card / "compare.html").is_file()


@pytest.mark.slow  # a whole battery sweep
def test_model_and_offline_cards_side_by_side(fake_model_sweeps, offline_sweep, tmp_path) -> None:
    out = tmp_path / "card"
    proc = analysis("card", str(fake_model_sweeps[0]), str(offline_sweep[0]), "--out", str(out), "--no-figures",
                    "--resamples", "200")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    cards = check_cards_csv(out / "cards.csv")
    assert list(cards["subject"]) == ["openai_compatible", "offline"]
    model = cards.iloc[0]
    assert model["tg_sent_fraction_status"] != "not run" and model["rel_macro_accuracy_status"] != "not run"
    compare = (out / "compare.html").read_text(encoding="utf-8")
    assert "openai_compatible" in compare and "offline" in compare
    card = (out / "card_openai_compatible.html").read_text(encoding="utf-8")
    assert "model / decoding" in card and "litellm_model=openai/fake-model" in card
    assert "sk-card-test" not in card + compare + (out / "cards.csv").read_text()
    assert 'data-warning="weak"' not in card and set(cards["weak"].fillna("")) == {""}


@pytest.mark.slow  # a card from every reference log
def test_reference_partial_cards(tmp_path) -> None:
    out = tmp_path / "ref"
    proc = analysis("card", "--reference", "--out", str(out), "--no-figures", "--resamples", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cards = check_cards_csv(out / "cards.csv")
    assert set(cards["subject"]) == REFERENCE_MODELS
    assert set(cards["kind"]) == {"reference logs"}
    for key in ESCAPE_ROOM:
        assert set(cards[f"{key}_status"]) <= {"ok", "underpowered"}, key
    for key in OTHER_FAMILIES:
        assert set(cards[f"{key}_status"]) == {"not run"}, key
    opus = cards.set_index("subject").loc["claude-opus-4-6"]
    assert opus["delta_trust"] == pytest.approx(
        1.7391304347826086 - 4.8
    )  # smooth − data anchor (docs/analysis.md)
    assert opus["breakage_status"] == "ok"  # opus has mid2strike runs; gpt-5.1 has none
    assert cards.set_index("subject").loc["gpt-5.1", "breakage_status"] == "not run"
    html = (out / "card_gpt-5.1.html").read_text(encoding="utf-8")
    assert html.count(">not run<") >= len(OTHER_FAMILIES)


@pytest.mark.slow  # a whole battery sweep
def test_analyse_api_returns_the_cards_table(offline_sweep) -> None:
    from analysis import card

    result = card.analyse([str(offline_sweep[0])], resamples=200)
    assert list(result.tables["cards"]["subject"]) == ["offline"]


def _browser_or_skip() -> None:
    try:
        chromium_path()
    except BrowserUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.mark.slow  # a whole battery sweep
@pytest.mark.browser
def test_card_prints_to_one_a4_page_in_chromium(offline_card: Path, tmp_path) -> None:
    _browser_or_skip()
    card = tmp_path / "card_offline.html"
    shutil.copy(offline_card / "card_offline.html", card)
    pages = render([card])
    assert pages == {card: 1}
    assert card.with_suffix(".png").stat().st_size > 20_000
    assert pdf_pages(card.with_suffix(".pdf").read_bytes()) == 1


@pytest.mark.browser
def test_a_crowded_card_still_prints_to_one_page(tmp_path) -> None:
    """The reference card with the longest notes (every escape-room figure filled)."""
    _browser_or_skip()
    out = tmp_path / "ref"
    proc = analysis("card", "--reference", "--out", str(out), "--resamples", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "not on one A4 page" not in proc.stderr
    assert len(list(out.glob("card_*.png"))) == 6


@pytest.mark.slow  # a whole battery sweep
def test_different_scripted_agents_are_never_pooled_silently(offline_sweep, tmp_path) -> None:
    from .conftest import trustsim

    other = tmp_path / "other"  # an unrelated sweep: two more escape-room agents, outside any battery
    proc = trustsim("-m", "+experiment=1strike", "agent=always_verify,bayes", "game.games=2", "progress=false",
                    f"hydra.sweep.dir={other}")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "card"
    proc = analysis(
        "card", str(offline_sweep[0]), str(other), "--out", str(out), "--no-figures", "--resamples", "100"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    note = "escape room: always_verify (offline-always_verify) on its own card, not pooled with bayes"
    assert f"analysis card: note: {note}" in proc.stderr
    cards = check_cards_csv(out / "cards.csv").set_index("subject")
    assert list(cards.index) == ["offline", "offline-always_verify"]
    # the battery's agent keeps the offline card; its size label counts what is there
    assert cards.loc["offline", "battery_size"] == "smoke, 11 parts + 1 run(s) outside a battery"
    assert cards.loc["offline-always_verify", "battery_size"] == "(not a battery run)"
    assert cards.loc["offline-always_verify", "kind"] == "runs"
    assert cards.loc["offline-always_verify", "rel_macro_accuracy_status"] == "not run"
    card = (out / "card_offline.html").read_text(encoding="utf-8")
    assert "Escape room: bayes;" in card and f"Kept apart: {note}" in card


@pytest.mark.slow  # a whole battery sweep
def test_a_weak_model_is_labelled_on_its_card(fake_model_sweeps, tmp_path) -> None:
    import json

    sweep = tmp_path / "weak"
    shutil.copytree(fake_model_sweeps[0], sweep)
    for path in sweep.glob("*/manifest.json"):  # the model config says weak: true, as smollm2's does
        manifest = json.loads(path.read_text())
        manifest["config"]["model"]["weak"] = True
        path.write_text(json.dumps(manifest))
    out = tmp_path / "card"
    proc = analysis("card", str(sweep), "--out", str(out), "--no-figures", "--resamples", "100")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cards = pd.read_csv(out / "cards.csv", keep_default_na=False)
    assert cards.loc[0, "weak"] == "openai_compatible is flagged weak (model.weak: true)"
    card = (out / "card_openai_compatible.html").read_text(encoding="utf-8")
    assert 'data-warning="weak"' in card and "smoke test of the pipeline" in card

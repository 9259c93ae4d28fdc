"""The viewer's data: every family's page data, escape-room replays that agree with the tables, reference
logs, failed runs, search, reports, and a deterministic build."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd

from analysis.view.markdown import markdown_to_html
from analysis.view.site import build_site

from .conftest import INVALID_TEXT, REFERENCE_RUNS, REFLECTION, read_data, view


def _index(site: Path) -> dict:
    return read_data(site, "index.js")


def _row(site: Path, name: str) -> dict:
    rows = [r for r in _index(site)["runs"] if Path(r["path"]).name == name]
    assert len(rows) == 1, [r["path"] for r in _index(site)["runs"]]
    return rows[0]


def test_index_lists_every_family_reference_runs_and_failures(site: Path) -> None:
    runs = _index(site)["runs"]
    assert {r["family"] for r in runs} == {"escape_room", "reliance", "arena", "trust_game"}
    assert sorted(r["path"].rsplit("/", 1)[1] for r in runs if r["source"] == "reference") == sorted(
        REFERENCE_RUNS
    )
    failed = [r for r in runs if r["status"] == "failed"]
    assert len(failed) == 1 and "game.coins" in failed[0]["failure"]
    llm = _row(site, "escape_llm")
    assert llm["calls_sent"] > 0 and llm["model"] == "openai_compatible"
    assert 0 < llm["invalid_share"] < 1


def test_escape_room_replay_agrees_with_the_tables(site: Path, corpus: Path) -> None:
    for name in ("escape_bayes", "escape_llm"):
        row = _row(site, name)
        run = read_data(site, f"r/{row['key']}/run.js")
        games = pd.read_csv(corpus / name / "games.csv")
        assert len(run["games"]) == len(games)
        for summary, (_, table) in zip(run["games"], games.iterrows(), strict=True):
            assert (summary["session"], summary["game"]) == (table["session"], table["game"])
            assert summary["verifications"] == table["verifications"]
            assert summary["partner_verifications"] == table["partner_verifications"]
            assert summary["outcome"] == table["outcome"]
            game = read_data(site, f"r/{row['key']}/g/{summary['session']}-{summary['game']}.js")
            assert len(game["rounds"]) == table["rounds"]
            first = game["rounds"][0]["capsules"]
            assert all(len(caps) == 1 and len(caps[0]["endorsers"]) == 1 for caps in first.values())
            # endorsements only grow, by one verifier each
            final = game["end"]["capsules"]
            endorsements = sum(len(c["endorsers"]) for caps in final.values() for c in caps)
            verifying = sum(1 for r in game["rounds"] for v in r["verifications"] if not v["already"])
            assert endorsements == 4 + verifying
            assert all(c["right"] in (True, False) for caps in final.values() for c in caps)


def test_invalid_answers_keep_their_raw_text(site: Path) -> None:
    row = _row(site, "escape_llm")
    run = read_data(site, f"r/{row['key']}/run.js")
    invalid = [
        d
        for s in run["games"]
        for r in read_data(site, f"r/{row['key']}/g/{s['session']}-{s['game']}.js")["rounds"]
        for d in r["decisions"]
        if d.get("valid") is False
    ]
    assert invalid and all(d["raw"] == INVALID_TEXT for d in invalid)
    search = read_data(site, f"r/{row['key']}/search.js")
    assert any("D was wrong" in entry[-1] for entry in search)


def test_reference_games_round_by_round(site: Path) -> None:
    row = _row(site, REFERENCE_RUNS[0])
    run = read_data(site, f"r/{row['key']}/run.js")
    assert len(run["games"]) == 11
    assert [g["d_correct"] for g in run["games"]][:2] == [False, True]  # a 1strike run: D fails game 1
    game = read_data(site, f"r/{row['key']}/g/0-2.js")
    first = game["rounds"][0]
    assert all(len(caps) == 1 for caps in first["capsules"].values())
    assert any(d["reasoning"] for d in first["decisions"])
    # game 2, round 1: B verified its own puzzle Q2 (the study charged it; see docs/escape_room.md)
    assert any(d["seat"] == "B" and d["action"] == "Verify: Q2" for d in first["decisions"])


def test_reliance_arena_and_trust_game_pages(site: Path, corpus: Path) -> None:
    rel = _row(site, "reliance")
    scenarios = read_data(site, f"r/{rel['key']}/scenarios.js")
    assert len(scenarios) == 3
    for sc in scenarios:
        assert len(sc["stages"]) >= 1
        for st in sc["stages"]:
            assert st["action"] in st["q_values"]
            best = min(st["q_values"].values())
            assert abs(st["regret"] - (st["q_values"][st["action"]] - best)) < 1e-6
    arena = _row(site, "arena")
    run = read_data(site, f"r/{arena['key']}/run.js")
    match = run["matches"][0]
    grid = read_data(site, f"r/{arena['key']}/m/{match['match']}.js")
    assert len(grid["rounds"]) == match["rounds"]
    assert all(set(r["seats"]) == {"A", "B"} for r in grid["rounds"])
    tg = _row(site, "trust_game")
    sessions = read_data(site, f"r/{tg['key']}/run.js")["sessions"]
    exchanges = read_data(site, f"r/{tg['key']}/tg/0.js")
    assert (
        sessions[0]["exchanges"]
        == len(exchanges)
        == len(pd.read_csv(corpus / "trust_game" / "exchanges.csv"))
    )


def test_reports_next_to_runs_are_embedded(site: Path) -> None:
    reports = _index(site)["reports"]
    assert len(reports) == 1 and reports[0]["figures"]
    page = site / reports[0]["href"]
    assert "<table>" in page.read_text(encoding="utf-8")
    assert all((page.parent / f).exists() for f in reports[0]["figures"])


def test_build_is_deterministic(site: Path, corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    proc = view(str(corpus), "--out", str(again))
    assert proc.returncode == 0, proc.stderr
    first = sorted(p.relative_to(site) for p in (site / "data").rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in (again / "data").rglob("*") if p.is_file())
    assert first == second
    assert all((site / p).read_bytes() == (again / p).read_bytes() for p in first)


def test_empty_or_missing_input_is_a_clear_error(tmp_path: Path) -> None:
    for args in ([str(tmp_path / "nope")], [str(tmp_path)]):
        proc = view(*args, "--out", str(tmp_path / "site"))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert str(tmp_path) in proc.stderr


def test_markdown_tables_images_and_escaping() -> None:
    out = markdown_to_html("# T\n\n| a | b |\n|---|---|\n| 1 | <x> |\n\n![fig](f.png)\n- item `code`")
    assert "<h1>T</h1>" in out and "<td>&lt;x&gt;</td>" in out
    assert '<img alt="fig" src="f.png">' in out and "<li>item <code>code</code></li>" in out


def _store_rows(store: Path) -> dict[str, tuple[dict, str]]:
    with sqlite3.connect(store) as conn:
        return {
            k: (json.loads(req), text)
            for k, req, text in conn.execute("SELECT key, request, text FROM responses")
        }


def _requests(site: Path, key: str, unit: str) -> dict:
    """A unit's request file with each entry's messages resolved (contents are indices into ``texts``)."""
    data = read_data(site, f"r/{key}/q/{unit}.js")
    for entry in data["entries"].values():
        for m in entry["messages"] if entry else []:
            m["content"] = data["texts"][m["content"]]
    return data["entries"]


def test_each_llm_decision_shows_its_exact_request_and_raw_response(site: Path, corpus: Path) -> None:
    row = _row(site, "escape_llm")
    run = read_data(site, f"r/{row['key']}/run.js")
    store = corpus.parent / "store.sqlite"
    assert run["requests"]["store"] == str(store) and run["requests"]["missing"] == 0
    rows = _store_rows(store)
    asked = set()
    for summary in run["games"]:
        unit = f"{summary['session']}-{summary['game']}"
        game = read_data(site, f"r/{row['key']}/g/{unit}.js")
        entries = _requests(site, row["key"], unit)
        for d in (d for r in game["rounds"] for d in r["decisions"]):
            if d["seat"] == "D":  # the scripted partner asks nothing
                assert "request" not in d and "raw" not in d
                continue
            request, text = rows[d["request"]]
            entry = entries[d["request"]]
            assert entry["messages"] == request["messages"] and entry["params"] == request["params"]
            assert entry["response"] == text == d["raw"] and entry["sample"] == request["sample"]
            asked.add(d["request"])
    assert len(asked) == row["calls_sent"] == run["requests"]["found"]


def test_own_answers_verifications_and_reflections_show_their_requests(site: Path, corpus: Path) -> None:
    """The model's calls outside the decisions (game.own_answer=llm, game.verifier=llm, reflection memory) are on
    the game page with their answers, each with its exact request and raw response in the game's request file."""
    row = _row(site, "escape_llm_calls")
    run = read_data(site, f"r/{row['key']}/run.js")
    assert run["requests"]["missing"] == 0
    rows = _store_rows(corpus.parent / "store.sqlite")
    purposes = {"own_answer": 0, "solve": 0, "reflection": 0}
    shown = set()
    for summary in run["games"]:
        unit = f"{summary['session']}-{summary['game']}"
        game = read_data(site, f"r/{row['key']}/g/{unit}.js")
        entries = _requests(site, row["key"], unit)
        verifications = [v for r in game["rounds"] for v in r["verifications"]]
        assert len(game["own_answers"]) == 3 and len(game["reflections"]) == 3  # the model seats A-C
        assert verifications and all(v["answer"] == 7 for v in verifications)
        assert all(c["answer"] == 7 for c in game["own_answers"])
        assert {c["raw"] for c in game["reflections"]} == {REFLECTION}
        for call in [*game["own_answers"], *verifications, *game["reflections"]]:
            request, text = rows[call["request"]]
            entry = entries[call["request"]]
            assert entry["messages"] == request["messages"] and entry["params"] == request["params"]
            assert entry["response"] == text == call["raw"]
            purposes[entry["purpose"]] += 1
            shown.add(call["request"])
        # the verifiers' answers are in the log, so every capsule is known right or wrong
        assert all(c["right"] in (True, False) for caps in game["end"]["capsules"].values() for c in caps)
    assert all(purposes.values()), purposes
    assert shown | {d["request"] for s in run["games"] for d in _decisions(site, row["key"], s)} == (
        _requests_asked(corpus / "escape_llm_calls")
    )


def _decisions(site: Path, key: str, summary: dict) -> list[dict]:
    game = read_data(site, f"r/{key}/g/{summary['session']}-{summary['game']}.js")
    return [d for r in game["rounds"] for d in r["decisions"] if d.get("request")]


def test_scripted_runs_ask_nothing_and_reference_logs_say_why(site: Path) -> None:
    for name in ("escape_bayes", "reliance", "arena", "trust_game"):
        key = _row(site, name)["key"]
        assert not (site / "data" / "r" / key / "q").exists(), name
    ref = read_data(site, f"r/{_row(site, REFERENCE_RUNS[0])['key']}/run.js")
    assert ref["requests"]["store"] is None and "hold no requests" in ref["requests"]["note"]


def test_a_missing_store_or_entry_is_said_plainly(corpus: Path, tmp_path: Path) -> None:
    moved = tmp_path / "runs" / "escape_llm"
    shutil.copytree(corpus / "escape_llm", moved)
    manifest = json.loads((moved / "manifest.json").read_text())
    manifest["config"]["llm"]["store_path"] = "gone/request_store.sqlite"
    (moved / "manifest.json").write_text(json.dumps(manifest))
    build_site([moved], tmp_path / "no_store")
    run = read_data(tmp_path / "no_store", f"r/{_only_key(tmp_path / 'no_store')}/run.js")
    assert run["requests"]["store"] is None and "gone/request_store.sqlite" in run["requests"]["note"]
    assert run["requests"]["found"] == 0 and run["requests"]["missing"] > 0
    # a store that lacks one entry (pruned): that decision says so, the others show theirs
    pruned = tmp_path / "pruned.sqlite"
    shutil.copyfile(corpus.parent / "store.sqlite", pruned)
    # the store also holds the trust-game run's requests: prune one this run's decisions asked for
    gone = min(_requests_asked(moved))
    with sqlite3.connect(pruned) as conn:
        assert conn.execute("DELETE FROM responses WHERE key = ?", (gone,)).rowcount == 1
    build_site([moved], tmp_path / "pruned_site", store=pruned)
    key = _only_key(tmp_path / "pruned_site")
    run = read_data(tmp_path / "pruned_site", f"r/{key}/run.js")
    assert run["requests"]["store"] == str(pruned) and run["requests"]["missing"] == 1
    units = (tmp_path / "pruned_site" / "data" / "r" / key / "q").glob("*.js")
    entries = {k: v for u in units for k, v in _requests(tmp_path / "pruned_site", key, u.stem).items()}
    assert entries[gone] is None and all(v is not None for k, v in entries.items() if k != gone)


def test_a_pruned_reflection_or_own_answer_says_so(corpus: Path, tmp_path: Path) -> None:
    """A store that lacks a reflection's and an own answer's entry: those two say so, the others show theirs."""
    events = [
        json.loads(line) for line in (corpus / "escape_llm_calls" / "events.jsonl").read_text().splitlines()
    ]
    gone = {next(e["request"] for e in events if e["type"] == kind) for kind in ("reflection", "own_answer")}
    pruned = tmp_path / "pruned.sqlite"
    shutil.copyfile(corpus.parent / "store.sqlite", pruned)
    with sqlite3.connect(pruned) as conn:
        for k in gone:
            assert conn.execute("DELETE FROM responses WHERE key = ?", (k,)).rowcount == 1
    build_site([corpus / "escape_llm_calls"], tmp_path / "site", store=pruned)
    key = _only_key(tmp_path / "site")
    assert read_data(tmp_path / "site", f"r/{key}/run.js")["requests"]["missing"] == 2
    units = (tmp_path / "site" / "data" / "r" / key / "q").glob("*.js")
    entries = {k: v for u in units for k, v in _requests(tmp_path / "site", key, u.stem).items()}
    assert {k for k, v in entries.items() if v is None} == gone


def _requests_asked(run: Path) -> set[str]:
    """The request keys a run's events name."""
    events = (json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line)
    return {e["request"] for e in events if e.get("request")}


def _only_key(site: Path) -> str:
    (row,) = read_data(site, "index.js")["runs"]
    return row["key"]


def test_trust_game_exchanges_name_both_requests(site: Path, corpus: Path) -> None:
    key = _row(site, "tg_llm")["key"]
    exchanges = read_data(site, f"r/{key}/tg/0.js")
    entries = _requests(site, key, "tg-0")
    rows = _store_rows(corpus.parent / "store.sqlite")
    assert len(exchanges) == 4
    for x in exchanges:
        sent, returned = entries[x["sent_request"]], entries[x["returned_request"]]
        asked_sender, asked_responder = sent["messages"][-1]["content"], returned["messages"][-1]["content"]
        assert asked_sender.startswith("You are the sender.")
        assert asked_responder.startswith("You are the responder.")
        assert (
            f"This is round {x['round']}." in asked_sender
            and f"This is round {x['round']}." in asked_responder
        )
        assert f"the sender sent {x['sent']} of" in asked_responder
        assert (
            sent["response"] == rows[x["sent_request"]][1]
            and returned["response"] == rows[x["returned_request"]][1]
        )


def test_a_sharded_store_is_read_from_every_shard_without_writing(tmp_path: Path) -> None:
    from analysis.view.requests import StoreReader
    from trustsim.llm.store import RequestStore, StoredResponse, canonical_request, request_key

    shards = tmp_path / "store_dir"
    keys = {}
    for job in ("a", "b"):
        store = RequestStore(shards / f"{job}.sqlite", job=job, journal="delete")
        messages = [{"role": "user", "content": f"job {job} asks"}]
        canonical = canonical_request("m", None, messages, {"temperature": 0}, 0)
        keys[job] = request_key(canonical)
        store.put(
            keys[job],
            model="m",
            api_base=None,
            sample=0,
            purpose="decision",
            canonical=canonical,
            response=StoredResponse(f"answer {job}", 3, 2, 0.0, 0.1),
        )
        store.close()
    before = {p.name: p.read_bytes() for p in shards.iterdir()}
    reader = StoreReader(shards)
    for job, key in keys.items():
        entry = reader.get(key)
        assert entry is not None and entry["response"] == f"answer {job}"
        assert entry["messages"] == [{"role": "user", "content": f"job {job} asks"}]
    assert reader.get("0" * 64) is None
    reader.close()
    assert {p.name: p.read_bytes() for p in shards.iterdir()} == before

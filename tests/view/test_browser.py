"""The viewer in a real browser: headless Debian Chromium driven by Playwright, the site opened from file://.

Screenshots go to outputs/test-artifacts/viewer/ (look at them). Off CI the tests skip when Playwright or
Chromium is missing; on CI (``CI`` set) that is a failure, since ``.ci/run`` installs both.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

from .conftest import INVALID_TEXT, read_data

ARTIFACTS = REPO / "outputs" / "test-artifacts" / "viewer"
pytestmark = pytest.mark.browser
CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _chromium() -> str:
    try:
        import playwright  # noqa: F401
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[dev]')"
    else:
        path = shutil.which("chromium") or shutil.which("chromium-browser")
        if path:
            return path
        reason = "Debian's chromium is not installed (apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    pg = browser.new_page(viewport={"width": 1300, "height": 900})
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    yield pg
    assert errors == [], errors
    pg.close()


def _shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _key(site: Path, name: str) -> str:
    (row,) = [r for r in read_data(site, "index.js")["runs"] if Path(r["path"]).name == name]
    return row["key"]


def test_index_filters_and_sorts(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("#runs tbody tr")
    total = len(read_data(site, "index.js")["runs"])
    assert page.locator("#runs tbody tr").count() == total
    assert page.locator("#runs tbody tr.failed").count() == 1
    assert "game.coins" in page.locator("#runs tbody tr.failed").inner_text()
    runs = read_data(site, "index.js")["runs"]
    newest = max((r for r in runs if r["date"]), key=lambda r: r["date"])
    assert page.locator("#runs tbody tr").first.locator("td").nth(0).inner_text() == newest["date"]
    first_id = page.locator("#runs tbody tr").first.locator("td.run-id").inner_text()
    assert first_id in {r["run_id"] for r in runs if r["date"] == newest["date"]}
    page.fill('input[data-filter="family"]', "reliance")
    assert page.locator("#runs tbody tr").count() == 1
    page.fill('input[data-filter="family"]', "")
    page.click('th[data-sort="games"]')
    page.click('th[data-sort="games"]')  # descending
    first = page.locator("#runs tbody tr").first.get_attribute("data-key")
    most = max(read_data(site, "index.js")["runs"], key=lambda r: r["games"] or 0)
    assert first == most["key"]
    _shot(page, "index")


def test_game_replay_steps_with_the_arrow_keys(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm")
    games = read_data(site, f"r/{key}/run.js")["games"]
    target = next(g for g in games if g["rounds"] >= 2)
    game = read_data(site, f"r/{key}/g/{target['session']}-{target['game']}.js")
    page.goto((site / "index.html").as_uri() + f"#/game/{key}/{target['session']}/{target['game']}/1")
    page.wait_for_selector("#round-title")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('round-title').textContent.startsWith('Round 2')")
    expected = game["rounds"][1]
    rows = page.locator("#decisions tr.decision")
    assert rows.count() == len(expected["decisions"])
    for i, d in enumerate(expected["decisions"]):
        text = rows.nth(i).inner_text()
        assert d["seat"] in text
        if d.get("reasoning"):
            assert d["reasoning"] in text
    shown = sorted(page.locator("#capsules .capsule").evaluate_all("els => els.map(e => e.dataset.label)"))
    assert shown == sorted(c["label"] for caps in expected["capsules"].values() for c in caps)
    _shot(page, "game_round2")
    for _ in range(len(game["rounds"]) - 1):  # quick presses: each one counts
        page.keyboard.press("ArrowRight")
    page.wait_for_function("document.getElementById('round-title').textContent === 'End of game'")
    assert game["end"]["outcome"] in page.locator("#outcome").inner_text()
    assert page.locator("#capsules .capsule.right").count() >= 1
    page.keyboard.press("ArrowRight")  # past the end: the next game's first round
    page.wait_for_function("document.getElementById('round-title').textContent.startsWith('Round 1')")
    assert f"/{games[games.index(target) + 1]['game']}/1" in page.url


def test_invalid_answers_show_their_raw_text(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm")
    for g in read_data(site, f"r/{key}/run.js")["games"]:
        game = read_data(site, f"r/{key}/g/{g['session']}-{g['game']}.js")
        for rnd in game["rounds"]:
            if any(d.get("valid") is False for d in rnd["decisions"]):
                page.goto(
                    (site / "index.html").as_uri() + f"#/game/{key}/{g['session']}/{g['game']}/{rnd['round']}"
                )
                page.wait_for_selector("#decisions tr.invalid")
                row = page.locator("#decisions tr.invalid").first
                assert "INVALID" in row.inner_text() and INVALID_TEXT in row.inner_text()
                _shot(page, "invalid_answer")
                return
    pytest.fail("the corpus has no invalid answer")


def test_a_decision_opens_its_request_and_raw_response(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm")
    game = read_data(site, f"r/{key}/g/0-1.js")
    requests = read_data(site, f"r/{key}/q/0-1.js")
    first = game["rounds"][0]["decisions"][0]
    entry = requests["entries"][first["request"]]
    page.goto((site / "index.html").as_uri() + f"#/game/{key}/0/1/1")
    page.wait_for_selector("#decisions button.req")
    assert page.locator("#decisions tr.decision[data-seat=D]").inner_text().count("scripted: no request") == 1
    page.locator("#decisions button.req").first.click()
    panel = page.locator("#decisions tr.req-panel")
    panel.wait_for()
    messages = panel.locator(".msg pre").all_inner_texts()
    assert messages == [requests["texts"][m["content"]] for m in entry["messages"]]
    assert panel.locator("pre.response").inner_text() == entry["response"] == first["raw"]
    assert entry["model"] in panel.locator("h4").first.inner_text()
    _shot(page, "request_panel")
    page.locator("#decisions button.req").first.click()  # closes it again
    assert page.locator("#decisions tr.req-panel").count() == 0


def _opens_its_request(page, button, requests: dict, call: dict) -> None:  # type: ignore[no-untyped-def]
    """Clicking ``button`` opens the call's request panel right after its line: the exact messages, the raw text."""
    entry = requests["entries"][call["request"]]
    button.click()
    panel = page.locator("li.req-panel")
    panel.wait_for()
    messages = panel.locator(".msg pre").all_inner_texts()
    assert messages == [requests["texts"][m["content"]] for m in entry["messages"]]
    assert panel.locator("pre.response").inner_text() == entry["response"] == call["raw"]
    assert entry["purpose"] in panel.locator("h4").first.inner_text()
    button.click()  # closes it again
    assert page.locator("li.req-panel").count() == 0


def test_own_answers_verifications_and_reflections_open_their_requests(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm_calls")
    game = read_data(site, f"r/{key}/g/0-1.js")
    requests = read_data(site, f"r/{key}/q/0-1.js")
    page.goto((site / "index.html").as_uri() + f"#/game/{key}/0/1/1")
    page.wait_for_selector("ul.own-answers button.req")
    own = page.locator("ul.own-answers li.own-answer")
    assert own.count() == 3 and "answered 7" in own.first.inner_text()
    _opens_its_request(page, own.first.locator("button.req"), requests, game["own_answers"][0])
    verification = page.locator("ul.events li.verification button.req").first
    _opens_its_request(page, verification, requests, game["rounds"][0]["verifications"][0])
    _shot(page, "own_answer_and_verification")
    page.goto((site / "index.html").as_uri() + f"#/game/{key}/0/1/end")
    page.wait_for_selector("ul.reflections button.req")
    reflection = page.locator("ul.reflections li.reflection").first
    _opens_its_request(page, reflection.locator("button.req"), requests, game["reflections"][0])
    _shot(page, "reflection")


def _whole_words(term: str) -> re.Pattern[str]:
    """The documented search rule for one term: its words, as whole words, in order, ignoring case."""
    body = r"\s+".join(re.escape(w) for w in term.split())
    return re.compile(rf"(?<![^\W]){body}(?![^\W])", re.IGNORECASE)


def test_search_rule_matches_whole_words_and_phrases(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("#runs tbody tr")
    cases = [  # query, text, matches, highlighted
        ("D wrong", "D was wrong in an earlier game.", True, ["D", "wrong"]),
        ("D wrong", "Did the deal go wrong? I doubt it.", False, ["wrong"]),
        ("d WRONG", "(D) said: wrong, d's answer was Wrong", True, ["D", "wrong", "d", "Wrong"]),
        ('"was wrong"', "D was\n  wrong before", True, ["was\n  wrong"]),
        ('"was wrong"', "wrong was D", False, []),
        ('"was wrong" D', "D was wrong", True, ["D", "was wrong"]),
        ("amp", "a & b <amp>", True, ["amp"]),
        ("q4?", "Verify Q4? yes", True, ["Q4?"]),
        ('"unclosed phrase', "an unclosed phrase", True, ["unclosed phrase"]),
    ]
    for query, text, matches, marked in cases:
        got = page.evaluate(
            """([q, t]) => { const m = TS.searchMatcher(q); const d = document.createElement("div");
               d.innerHTML = m.mark(t);
               return [m.test(t), [...d.querySelectorAll("mark")].map((e) => e.textContent), d.textContent]; }""",
            [query, text],
        )
        assert got == [matches, marked, text], (query, text, got)


def test_search_finds_reasoning_and_links_to_the_round(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm")
    rules = [_whole_words("D"), _whole_words("wrong")]
    entries = read_data(site, f"r/{key}/search.js")
    expected = [e for e in entries if all(r.search(e[-1]) for r in rules)]
    assert expected and len(expected) < sum("d" in e[-1].lower() for e in entries)  # not substrings
    page.goto((site / "index.html").as_uri() + f"#/run/{key}")
    assert "whole words" in page.locator("#search-help").inner_text()
    page.fill("#search-input", "D wrong")
    page.press("#search-input", "Enter")
    page.wait_for_selector("#search-count")
    assert page.locator("#search-results li").count() == min(len(expected), 500)
    marks = page.locator("#search-results mark").all_inner_texts()
    shown = expected[:500]
    assert len(marks) == sum(len(r.findall(e[-1])) for e in shown for r in rules)
    assert {m.lower() for m in marks} == {"d", "wrong"}
    _shot(page, "search")
    page.locator("#search-results li a").first.click()
    page.wait_for_selector("#round-title")
    e = expected[0]
    assert (
        page.locator("#round-title").inner_text()
        == f"Round {e[2]} of " + page.locator("#round-title").inner_text().split(" of ")[1]
    )


def test_reliance_path_arena_grid_trust_game_and_reference(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    base = (site / "index.html").as_uri()
    rel = _key(site, "reliance")
    scenario = read_data(site, f"r/{rel}/scenarios.js")[0]
    page.goto(base + f"#/scenario/{rel}/0")
    page.wait_for_selector(".stage")
    assert page.locator(".stage").count() == len(scenario["stages"])
    assert page.locator(".stage").first.locator(".qvalues tbody tr").count() == len(
        scenario["stages"][0]["q_values"]
    )
    assert page.locator(".stage").first.locator("tr.q-chosen").count() == 1
    _shot(page, "reliance_path")
    arena = _key(site, "arena")
    match = read_data(site, f"r/{arena}/run.js")["matches"][0]
    page.goto(base + f"#/run/{arena}")
    page.locator("#matches a").first.click()
    page.wait_for_selector("#move-grid")
    assert page.locator("#move-grid .cell").count() == 2 * match["rounds"]
    assert page.locator("#moves tbody tr").count() == match["rounds"]
    _shot(page, "arena_match")
    tg = _key(site, "trust_game")
    page.goto(base + f"#/tg/{tg}/0")
    page.wait_for_selector(".exchanges")
    assert page.locator(".exchanges tbody tr").count() == len(read_data(site, f"r/{tg}/tg/0.js"))
    _shot(page, "trust_game")
    ref = next(r for r in read_data(site, "index.js")["runs"] if r["source"] == "reference")
    page.goto(base + f"#/game/{ref['key']}/0/1/1")
    page.wait_for_selector("#decisions")
    assert "D wrong" in page.locator("h1").inner_text()
    assert page.locator("#decisions td.reasoning").first.inner_text().strip()
    _shot(page, "reference_game")


def test_report_page_opens(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("#runs tbody tr")
    page.locator("text=report_arena").first.click()
    page.wait_for_selector("main.report table")
    assert page.locator("main.report img").count() >= 1

"""The viewer in a real browser: headless Debian Chromium driven by Playwright, the site opened from file://.

Screenshots go to outputs/test-artifacts/viewer/ (look at them). Off CI the tests skip when Playwright or
Chromium is missing; on CI (``CI`` set) that is a failure, since ``.ci/run`` installs both.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

from .conftest import INVALID_TEXT, read_data

ARTIFACTS = REPO / "outputs" / "test-artifacts" / "viewer"
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


def test_search_finds_reasoning_and_links_to_the_round(site: Path, page) -> None:  # type: ignore[no-untyped-def]
    key = _key(site, "escape_llm")
    expected = [
        e for e in read_data(site, f"r/{key}/search.js") if "d" in e[-1].lower() and "wrong" in e[-1].lower()
    ]
    assert expected
    page.goto((site / "index.html").as_uri() + f"#/run/{key}")
    page.fill("#search-input", "D wrong")
    page.press("#search-input", "Enter")
    page.wait_for_selector("#search-count")
    assert page.locator("#search-results li").count() == min(len(expected), 500)
    assert page.locator("#search-results mark").count() >= 2
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

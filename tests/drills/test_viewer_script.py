"""No script from run data in the report viewer: a model name that is Markdown with an attribute break-out or a
``javascript:`` link stays text, in the converter and in Chromium (a site built from real runs and their
``analysis trust_game`` report)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.view.markdown import markdown_to_html, safe_url
from tests.conftest import REPO, run_in_process
from tests.view.test_browser import CHROMIUM_ARGS, _chromium

IMG = 'x"onerror="window.__xss=9;"'
PAYLOADS = {
    "img": f"![a]({IMG})",
    "js": "[click](javascript:window.__xss=8)",
    "case": "[click](JaVaScRiPt:window.__xss=7)",
    "ctrl": "[click](\x01javascript:window.__xss=6)",
    "data": "[d](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9NTwvc2NyaXB0Pg==)",
    "vb": "![v](vbscript:msgbox)",
    "entity": "[e](javascript&#58;window.__xss=4)",
}


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.org/a?b=1", True), ("HTTP://example.org", True), ("fig/a.png", True),
        ("../x.png", True), ("#top", True), ("?q=1", True), ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False), (" javascript:x", False), ("java\tscript:x", False),
        ("\x01javascript:x", False), ("data:text/html,x", False), ("vbscript:x", False), ("file:///etc", False),
        ("mailto:a@b", False), ("\\\\evil/x", False), ("", False),
    ],
)  # fmt: skip
def test_safe_url(url: str, ok: bool) -> None:
    assert safe_url(url) is ok


def test_payloads_render_as_text_and_attributes_are_escaped() -> None:
    for name, payload in PAYLOADS.items():
        out = markdown_to_html(
            f"| model |\n|---|\n| llm({payload}) |\n\n# {payload}\n- {payload}\n\n{payload}"
        )
        assert "<script" not in out and "onerror=" not in out.replace("&quot;onerror=&quot;", ""), name
        assert (
            'href="javascript:' not in out.lower() and 'src="data' not in out and 'src="vbscript' not in out
        )
        assert "<a " not in out or name == "entity", name
    entity = markdown_to_html(PAYLOADS["entity"])  # no colon: a relative URL, its "&" escaped (no entity)
    assert entity == '<p><a href="javascript&amp;#58;window.__xss=4">e</a></p>'
    img = markdown_to_html(PAYLOADS["img"])
    assert img == '<p><img alt="a" src="x&quot;onerror=&quot;window.__xss=9;&quot;"></p>'
    text = markdown_to_html(PAYLOADS["js"])
    assert text == "<p>[click](javascript:window.__xss=8)</p>"
    alt = markdown_to_html('![x" onload="y](f.png) [a <b>](#t) `<i>` **<u>**')
    assert alt == (
        '<p><img alt="x&quot; onload=&quot;y" src="f.png"> <a href="#t">a &lt;b&gt;</a> <code>&lt;i&gt;</code> '
        "<strong>&lt;u&gt;</strong></p>"
    )


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two trust-game runs whose model names are the payloads, their report, and the site built from both."""
    root = tmp_path_factory.mktemp("hostile")
    mock = {"send": 6, "expected_return": 9, "p_return_at_least_sent": 0.7, "return": 9, "reasoning": "split"}
    for name in ("img", "js"):
        code = run_in_process(
            [
                "+experiment=trust_game_repeated", "agent=llm", "game.pairs=1", "game.rounds=1", "model=scripted",
                f"model.name='{PAYLOADS[name]}'", "+model.litellm_model=openai/mock",
                f"llm.store_path={root / 'store.sqlite'}", f"+model.params.mock_response='{json.dumps(mock)}'",
            ],
            root / "runs" / name,
        )  # fmt: skip
        assert code == 0, name
    runs = root / "runs"
    for args in (["trust_game", str(runs / "img"), str(runs / "js"), "--out", str(runs / "report")],
                 ["view", str(runs), "--out", str(root / "site")]):  # fmt: skip
        proc = subprocess.run(
            [sys.executable, "-m", "analysis", *args], cwd=REPO, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
    report = (runs / "report" / "report.md").read_text()
    assert PAYLOADS["img"] in report and PAYLOADS["js"] in report  # the report carries the names verbatim
    return root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.slow
@pytest.mark.browser
def test_no_script_runs_in_chromium(hostile_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    report = hostile_site / "reports" / "1" / "index.html"
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # let a broken image fire its error event
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("main.report img[onerror]").count() == 0
    assert page.locator("main.report a[href^='javascript' i]").count() == 0
    page.get_by_text("[click](javascript:window.__xss=8)").first.click()  # plain text: nothing happens
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.__xss") == "undefined"
    urls = page.eval_on_selector_all(
        "[href], [src]", "els => els.map(e => e.getAttribute('href') ?? e.getAttribute('src'))"
    )
    assert urls and all(safe_url(u) for u in urls), urls
    page.goto((hostile_site / "index.html").as_uri())  # the run pages show the names too
    page.wait_for_selector("#runs tbody tr")
    for key in [r.get_attribute("data-key") for r in page.locator("#runs tbody tr").all()]:
        page.goto(f"{(hostile_site / 'index.html').as_uri()}#/run/{key}")
        page.wait_for_timeout(200)
        assert page.evaluate("typeof window.__xss") == "undefined"
    assert errors == []
    page.close()

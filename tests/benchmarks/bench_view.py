"""Viewer scale: build time for a 10,000-game run and for the whole reference dataset, and how long the browser
takes to open the index and a game (headless Debian chromium via Playwright, from file://).

    .venv/bin/python tests/benchmarks/bench_view.py [--games 10000] [--reference DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _browser_times(site: Path, key: str) -> tuple[float, float]:
    from playwright.sync_api import sync_playwright

    from tests.view.test_browser import CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page()
        t0 = time.perf_counter()
        page.goto((site / "index.html").as_uri())
        page.wait_for_selector("#runs tbody tr")
        index_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.goto((site / "index.html").as_uri() + f"#/game/{key}/{900}/{5}/1")
        page.wait_for_selector("#decisions")
        game_s = time.perf_counter() - t0
        browser.close()
    return index_s, game_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--games", type=int, default=10_000, help="escape-room games in the big run (11 per session)"
    )
    parser.add_argument(
        "--reference", type=Path, default=None, help="reference runs folder (default: shipped)"
    )
    args = parser.parse_args()
    from analysis.view.site import build_site, run_key
    from trustsim import api
    from trustsim.rundir import read_manifest

    work = Path(tempfile.mkdtemp(prefix="bench_view_"))
    sessions = max(1, args.games // 11)
    t0 = time.perf_counter()
    result = api.run(
        None, ["+experiment=mid2strike", "agent=bayes", f"runs={sessions}", "progress=false"], work / "big"
    )
    print(f"engine run: {sessions * 11} games in {time.perf_counter() - t0:.1f} s (status {result.status})")
    t0 = time.perf_counter()
    stats = build_site([work / "big"], work / "site_big")
    print(f"build, {stats.games} games: {time.perf_counter() - t0:.2f} s, {stats.files} data files")
    manifest = read_manifest(work / "big")
    key = run_key(manifest["run_id"], work / "big")
    index_s, game_s = _browser_times(work / "site_big", key)
    print(
        f"browser: index open {index_s:.2f} s (target < 2 s); run page + game 5 of session 900 {game_s:.2f} s (target < 1 s)"
    )

    reference = args.reference
    if reference is None:
        from analysis.reference_data import reference_dir

        reference = reference_dir()
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "analysis", "view", str(reference), "--out", str(work / "site_ref")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    print(
        f"reference dataset (whole CLI incl. start-up): {time.perf_counter() - t0:.1f} s (target <= 30 s): {out.stdout.strip()}"
    )
    shutil.rmtree(work)
    print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

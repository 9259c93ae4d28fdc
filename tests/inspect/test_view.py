"""``inspect view`` on a log of a trustsim task, in headless Debian Chromium: the task, its sample, and the
game's events in the sample's transcript. Screenshots go to outputs/test-artifacts/inspect/."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.view.test_browser import CHROMIUM_ARGS, _chromium

ARTIFACTS = REPO / "outputs" / "test-artifacts" / "inspect"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.browser
def test_inspect_view_shows_the_task_a_sample_and_its_game(mockllm_log):
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    port = _free_port()
    log_dir = str(Path(mockllm_log.location).parent)
    inspect = str(Path(sys.executable).with_name("inspect"))
    server = subprocess.Popen([inspect, "view", "start", "--log-dir", log_dir, "--host", "127.0.0.1", "--port",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()[-2000:]
                time.sleep(0.3)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(url)
            page.get_by_text("trustsim/escape_room").first.click()
            sample = page.get_by_text("mid2strike-session-seed0").first
            sample.wait_for(timeout=60_000)
            sample.click()
            page.get_by_text("INFO: TRUSTSIM").first.wait_for(timeout=60_000)  # the game's events
            page.get_by_text("session_start").first.wait_for(timeout=10_000)
            assert page.get_by_text("mockllm/model").count() > 0
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "sample.png"))
            browser.close()
    finally:
        server.terminate()
        server.wait(20)

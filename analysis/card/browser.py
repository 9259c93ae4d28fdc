"""Render a card with headless Chromium (Playwright, Debian's ``chromium``): the PNG and the printed PDF."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
A4_WIDTH_PX = 794  # 210 mm at 96 dpi


class BrowserUnavailable(RuntimeError):
    """Playwright or a Chromium binary is missing (the message says which and how to install it)."""


def chromium_path() -> str:
    """Debian's Chromium (the viewer's browser tests use the same one)."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        raise BrowserUnavailable("playwright is not installed (pip install -e '.[dev]')") from None
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise BrowserUnavailable("Chromium is not installed (apt-get install chromium)")
    return path


def pdf_pages(pdf: bytes) -> int:
    """Number of pages in a PDF written by Chromium (``/Type /Page`` objects)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def render(html_files: list[Path], *, png: bool = True, pdf: bool = True) -> dict[Path, int]:
    """Write ``<card>.png`` (screenshot at A4 width, 2x) and ``<card>.pdf`` (printed, @page A4) next to each
    card; returns the printed page count of each card."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    pages: dict[Path, int] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": A4_WIDTH_PX, "height": 1123}, device_scale_factor=2)
            for path in html_files:
                page.goto(path.resolve().as_uri())
                if png:
                    page.screenshot(path=str(path.with_suffix(".png")), full_page=True)
                if pdf:
                    data = page.pdf(prefer_css_page_size=True, print_background=True)
                    path.with_suffix(".pdf").write_bytes(data)
                    pages[path] = pdf_pages(data)
        finally:
            browser.close()
    return pages

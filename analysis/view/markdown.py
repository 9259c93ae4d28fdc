"""A small Markdown → HTML converter for the analysis reports the viewer embeds (headings, paragraphs, lists,
pipe tables, images, links, code spans and fenced blocks: what ``report.md`` files use). Text and
attribute values are escaped; a link or image URL must be ``http(s)://``, relative or ``#``."""

from __future__ import annotations

import html
import re

_INLINE = re.compile(
    r"(?P<image>!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\))"
    r"|(?P<link>\[(?P<label>[^\]]+)\]\((?P<href>[^)\s]+)\))"
    r"|`(?P<code>[^`]+)`"
    r"|\*\*(?P<bold>[^*]+)\*\*"
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def safe_url(url: str) -> bool:
    """Whether ``url`` may go into an ``href``/``src``: ``http(s)://``, relative or ``#``; never another scheme
    (``javascript:``, ``data:``, ``vbscript:``), nor a control character or whitespace (a browser drops those
    inside a scheme name), nor a backslash (read as ``/``)."""
    if not url or any(ord(c) <= 0x20 or ord(c) == 0x7F or c == "\\" for c in url):
        return False
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() in ("http", "https")


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def _inline(text: str) -> str:
    """One line of Markdown as HTML: every text node and attribute value escaped; a link or image whose URL is
    not :func:`safe_url` stays its escaped source text."""
    out: list[str] = []
    last = 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[last : m.start()]))
        last = m.end()
        if m.group("image") is not None:
            src = m.group("src")
            ok = safe_url(src)
            out.append(
                f'<img alt="{_attr(m.group("alt"))}" src="{_attr(src)}">' if ok else html.escape(m.group(0))
            )
        elif m.group("link") is not None:
            href = m.group("href")
            ok = safe_url(href)
            out.append(
                f'<a href="{_attr(href)}">{_inline(m.group("label"))}</a>' if ok else html.escape(m.group(0))
            )
        elif m.group("code") is not None:
            out.append(f"<code>{html.escape(m.group('code'))}</code>")
        else:
            out.append(f"<strong>{_inline(m.group('bold'))}</strong>")
    out.append(html.escape(text[last:]))
    return "".join(out)


def _table(lines: list[str]) -> str:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    body = [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]
    head = "".join(f"<th>{_inline(c)}</th>" for c in rows[0])
    cells = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


def markdown_to_html(text: str) -> str:
    """Convert a report's Markdown to an HTML fragment."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + html.escape("\n".join(lines[i + 1 : j])) + "</pre>")
            i = j + 1
            continue
        if line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif re.match(r"^\s*[-*]\s+", line):
            j = i
            items = []
            while j < len(lines) and re.match(r"^\s*[-*]\s+", lines[j]):
                items.append("<li>" + _inline(re.sub(r"^\s*[-*]\s+", "", lines[j])) + "</li>")
                j += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            i = j
            continue
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out)

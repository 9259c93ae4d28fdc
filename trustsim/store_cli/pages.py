"""Read a store's rows from its b-tree leaf pages directly, without the tree above them.

When a damaged interior page (the table's root, say) hides intact leaves from every SQL path, ``recover``
walks the file page by page: every table-leaf page (type 0x0D) not on the freelist, every cell on it (with
its overflow chain), decoded as a SQLite record (https://www.sqlite.org/fileformat.html). Only records that
prove themselves a response are kept (:func:`trustsim.store_cli.manage.valid_row`: the right columns and types,
and a key that is the hash of its own request), so a cell of another table, a stale copy or a torn one is
never taken for an answer.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LEAF_TABLE = 0x0D
_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A SQLite varint at ``pos``: (value, position after it)."""
    value = 0
    for i in range(8):
        byte = buf[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | buf[pos + 8], pos + 9


def _record(payload: bytes) -> list[Any]:
    """The values of one record (header of serial types, then the body); ValueError when malformed."""
    size, pos = _varint(payload, 0)
    if not 0 < size <= len(payload):
        raise ValueError("bad record header")
    types = []
    while pos < size:
        kind, pos = _varint(payload, pos)
        types.append(kind)
    values: list[Any] = []
    at = size
    for kind in types:
        if kind == 0:
            values.append(None)
        elif kind in _INT_SIZES:
            n = _INT_SIZES[kind]
            values.append(int.from_bytes(payload[at : at + n], "big", signed=True))
            at += n
        elif kind == 7:
            values.append(struct.unpack(">d", payload[at : at + 8])[0])
            at += 8
        elif kind in (8, 9):
            values.append(kind - 8)
        elif kind >= 12:
            n = (kind - 12) // 2
            raw = payload[at : at + n]
            values.append(raw.decode("utf-8") if kind % 2 else raw)
            at += n
        else:
            raise ValueError("reserved serial type")
        if at > len(payload):
            raise ValueError("record runs past its payload")
    return values


def _freelist(data: bytes, page_size: int) -> set[int]:
    """Pages on the freelist (trunk and leaf), as far as it can be read."""
    free: set[int] = set()
    trunk = int.from_bytes(data[32:36], "big")
    pages = len(data) // page_size
    while 0 < trunk <= pages and trunk not in free:
        free.add(trunk)
        base = (trunk - 1) * page_size
        count = int.from_bytes(data[base + 4 : base + 8], "big")
        for i in range(min(count, page_size // 4 - 2)):
            free.add(int.from_bytes(data[base + 8 + 4 * i : base + 12 + 4 * i], "big"))
        trunk = int.from_bytes(data[base : base + 4], "big")
    return free


def _payload(data: bytes, page_size: int, usable: int, start: int, size: int) -> bytes:
    """A cell's payload at ``start`` (``size`` bytes in all), its overflow chain followed."""
    most = usable - 35
    least = ((usable - 12) * 32 // 255) - 23
    if size <= most:
        return data[start : start + size]
    local = least + (size - least) % (usable - 4)
    local = local if local <= most else least
    out = bytearray(data[start : start + local])
    page = int.from_bytes(data[start + local : start + local + 4], "big")
    seen: set[int] = set()
    pages = len(data) // page_size
    while len(out) < size and 0 < page <= pages and page not in seen:
        seen.add(page)
        base = (page - 1) * page_size
        out += data[base + 4 : base + min(usable, 4 + size - len(out))]
        page = int.from_bytes(data[base : base + 4], "big")
    if len(out) < size:
        raise ValueError("overflow chain cut short")
    return bytes(out)


def leaf_records(path: Path) -> Iterator[tuple[int, list[Any]]]:
    """``(rowid, values)`` of every cell of every table-leaf page of the SQLite file ``path`` that decodes
    (a UTF-8 database only; an unreadable cell is skipped)."""
    data = path.read_bytes()
    if len(data) < 100 or not data.startswith(b"SQLite format 3\x00") or data[56:60] != b"\x00\x00\x00\x01":
        return
    page_size = int.from_bytes(data[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512:
        return
    usable = page_size - data[20]
    free = _freelist(data, page_size)
    for number in range(1, len(data) // page_size + 1):
        if number in free:
            continue
        base = (number - 1) * page_size
        head = base + (100 if number == 1 else 0)
        if data[head] != LEAF_TABLE:
            continue
        cells = int.from_bytes(data[head + 3 : head + 5], "big")
        for i in range(min(cells, page_size // 2)):
            try:
                offset = int.from_bytes(data[head + 8 + 2 * i : head + 10 + 2 * i], "big")
                if not 0 < offset < usable:
                    continue
                size, pos = _varint(data, base + offset)
                rowid, pos = _varint(data, pos)
                yield rowid, _record(_payload(data, page_size, usable, pos, size))
            except (IndexError, ValueError, UnicodeDecodeError, struct.error):
                continue

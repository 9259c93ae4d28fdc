"""Deterministic seeds: every random draw comes from a generator derived from a root hash and keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np


def stable_hash(obj: Any) -> str:
    """SHA-256 hex digest of a JSON-serialisable object in canonical form (sorted keys, no spaces)."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Seeder:
    """Derives independent seeds from a root hash: ``seed("session", 3, "seat", "A")``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def seed(self, *keys: object) -> int:
        """A 63-bit integer seed for the given key path."""
        material = self.root + "/" + "/".join(str(k) for k in keys)
        digest = hashlib.sha256(material.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def rng(self, *keys: object) -> np.random.Generator:
        return np.random.default_rng(self.seed(*keys))

    def child(self, *keys: object) -> Seeder:
        return Seeder(stable_hash([self.root, *map(str, keys)]))

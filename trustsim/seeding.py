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
        material = f"{self.root}/{'/'.join(map(str, keys))}"
        digest = hashlib.sha256(material.encode()).digest()
        return int.from_bytes(digest[:8], "big") >> 1

    def rng(self, *keys: object) -> np.random.Generator:
        return np.random.default_rng(self.seed(*keys))

    def child(self, *keys: object) -> Seeder:
        return Seeder(stable_hash([self.root, *map(str, keys)]))


SAMPLE_BITS = 31


class SeedTree:
    """The one seed tree of a job: every random stream derives here.

    The root is the world hash (the values of the game's world keys only), so registering an agent or
    changing an execution setting (concurrency, progress, launcher) changes no stream. A stream is named by
    its path, and the path says whose it is:

    - world streams (puzzles, partner behaviour, drawn lengths, feedback), the same for every agent and model
      on the same seed (common random numbers), are named by what they draw: ``("session", 0, "game", 3)``;
    - an agent's own randomness is named by whose it is: ``("session", 0, "seat", "A")``;
    - ``sample(*path)``: the LLM sample index of a request stream (part of the request-store key), in its own
      branch: ``("session", 0, "seat", "A")``; a 31-bit integer.

    ``seed(*path)`` equals ``Seeder(root).seed(*path)`` (the historical key paths).
    """

    def __init__(self, world_hash: str) -> None:
        self.root = world_hash
        self._seeder = Seeder(world_hash)

    def seed(self, *path: object) -> int:
        """The 63-bit seed of the stream named ``path``."""
        return self._seeder.seed(*path)

    def rng(self, *path: object) -> np.random.Generator:
        """A generator of the stream named ``path``."""
        return np.random.default_rng(self.seed(*path))

    def sample(self, *path: object) -> int:
        """The LLM sample index of a request stream: distinct per stream, reproducible, 31 bits."""
        return self._seeder.seed("sample", *path) >> (63 - SAMPLE_BITS)

    def seeder(self, *path: object) -> Seeder:
        """A :class:`Seeder` rooted at a branch of the world (for code that derives many keyed seeds)."""
        return self._seeder.child(*path) if path else self._seeder

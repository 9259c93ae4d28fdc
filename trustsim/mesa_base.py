"""The Mesa base every game's model uses: agents whose id counters die with their model.

Mesa 3.3 numbers agents with ``mesa.Agent._ids``, a class-level ``defaultdict`` keyed by model. Its keys
are strong references, so every model that ever created an agent stays alive, with everything it holds, for
the life of the process; a job plays thousands of short games (matches, scenarios), so memory grows with
the job. Agents derived from :class:`Agent` draw their ``unique_id`` from counters keyed *weakly* by model
instead (the same numbering: per model, from 1), so a finished model is freed like any other object. Mesa
itself is not patched: the counters are an ordinary class attribute of our subclass, which
``mesa.Agent.__init__`` reads as ``self._ids``.
"""

from __future__ import annotations

import itertools
import weakref

import mesa


class PerModelCounters:
    """``unique_id`` counters keyed weakly by model (``counters[model]`` → an ``itertools.count`` from 1)."""

    def __init__(self) -> None:
        self._counters: weakref.WeakKeyDictionary[mesa.Model, itertools.count] = weakref.WeakKeyDictionary()

    def __getitem__(self, model: mesa.Model) -> itertools.count:
        counter = self._counters.get(model)
        if counter is None:
            counter = self._counters[model] = itertools.count(1)
        return counter

    def __len__(self) -> int:
        """Models with a live counter (for tests: finished models drop out)."""
        return len(self._counters)


class Agent(mesa.Agent):
    """A ``mesa.Agent`` that does not keep its model alive; every game's agents derive from it.

    One counter per model is shared by all agent classes, so ids are unique within a model, as in Mesa.
    """

    _ids = PerModelCounters()


__all__ = ["Agent", "PerModelCounters"]

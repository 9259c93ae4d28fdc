"""What the viewer and the trust card know about a game family: its declaration, found by discovery.

Each game family's analysis package declares itself in a ``family`` module (``analysis/arena/family.py``)
with :func:`register_family`: the game's name as its runs' manifests record it, a title, how the viewer shows
one of its runs (:class:`ViewPage`) and its section of the trust card (:class:`CardSection`). The viewer
(:mod:`analysis.view.site`) and the card (:mod:`analysis.card.collect`) ask :func:`families` and hold no list
of games. A game installed as a plugin declares its family from any module named by the entry-point group
``trustsim.analysis`` (the way ``trustsim.plugins`` brings its game and agents to the engine).

Like the rest of ``analysis``, a declaration imports no game, agent or engine module: it reads run directories.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

PLUGIN_GROUP = "trustsim.analysis"
"""Entry-point group: each entry point names a module that registers game families on import."""


@dataclass(frozen=True)
class ViewPage:
    """How the viewer shows one run of the family.

    Attributes:
        page: ``page(writer, run, events, row) -> dict``: writes the run's detail files with
            ``writer.put(rel, key, data)`` (``analysis.view.site.SiteWriter``), may set ``row`` fields of the
            index (``invalid_share``, ``games``, ``decisions``), and returns the run page's data (keys the page
            script shows: ``games``, ``scenarios``, ``matches``, ``sessions`` or generic ``tables``, see
            :func:`analysis.view.site.table_page`). ``events`` iterates the run's readable events.
            ``writer.stores.for_run(run)`` opens the run's request store (:mod:`analysis.view.requests`) for
            the decisions' exact requests: its ``write`` puts a unit's requests by their keys (the events'
            ``request``) and ``page_info()`` goes into the page data as ``requests``.
    """

    page: Callable[[Any, Any, Iterator[dict[str, Any]], dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class CardData:
    """What every card section reads: the run/sweep directories, the reference logs, which families have runs,
    and the bootstrap settings."""

    run_paths: list[str]
    reference: Any  # a Path or None
    present: set[str]  # the games with runs among run_paths
    resamples: int
    seed: int


@dataclass(frozen=True)
class CardSection:
    """The family's section of the trust card.

    Attributes:
        heading: The section's heading.
        keys: Its figures' keys, in the order shown (``cards.csv`` columns follow them).
        figures: ``figures(data) -> per_subject``: reads what the section needs once (its analysis over
            ``data.run_paths``), then ``per_subject(subject) -> {key: Figure}`` for each card's subject
            (``subject.matches(model, agent)`` tells its rows; ``analysis.card.figures`` builds figures,
            ``not_run`` where the subject has no data).
        invalid: Optional ``invalid(run, subject) -> (invalid answers, answers)`` of one run for the card's
            provenance (``run`` an ``analysis.rundirs.Run``).
        subjects: Optional ``subjects(data) -> model names``: cards this family adds beyond the runs' models
            (the escape room's reference logs).
        provenance: Optional ``provenance(subject, data) -> dict``: the provenance of a card with no run of the
            engine (a reference-log model's).
        llm_run: Optional ``llm_run(config) -> bool``: whether a run (its manifest's config) plays a language
            model although its ``agent`` group's agent is not ``llm`` (e.g. a role's own agent); default: no.
    """

    heading: str
    keys: tuple[str, ...]
    figures: Callable[[CardData], Callable[[Any], dict[str, Any]]]
    invalid: Callable[[Any, Any], tuple[int, int]] | None = None
    subjects: Callable[[CardData], Iterable[str]] | None = None
    provenance: Callable[[Any, CardData], dict[str, Any]] | None = None
    llm_run: Callable[[dict[str, Any]], bool] | None = None


@dataclass(frozen=True)
class FamilyDeclaration:
    """A game family as analysis sees it: ``game`` is the manifest's ``game`` of its runs."""

    game: str
    title: str
    view: ViewPage | None = None
    card: CardSection | None = None
    order: int = 100  # where its card section comes (lower first); ties by title


_FAMILIES: dict[str, FamilyDeclaration] = {}
_LOCK = threading.RLock()
_discovered = False


def register_family(family: FamilyDeclaration) -> FamilyDeclaration:
    """Declare a game family (the same game declared again replaces the earlier declaration)."""
    with _LOCK:
        _FAMILIES[family.game] = family
    return family


def unregister_family(game: str) -> None:
    """Remove a family (tests declare throwaway ones)."""
    with _LOCK:
        _FAMILIES.pop(game, None)


def discover() -> None:
    """Import every ``analysis.<package>.family`` module, then the plugin entry points (once)."""
    global _discovered
    with _LOCK:
        if _discovered:
            return
        _discovered = True
        import analysis

        for info in sorted(pkgutil.iter_modules(analysis.__path__), key=lambda m: m.name):
            if info.ispkg and importlib.util.find_spec(f"analysis.{info.name}.family") is not None:
                _import(f"analysis.{info.name}.family")
        for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
            _import(ep.value.split(":")[0])


def _import(module: str) -> None:
    """Import a declaring module; a broken one is reported and leaves the others."""
    try:
        importlib.import_module(module)
    except Exception as exc:
        print(f"warning: cannot import {module} ({type(exc).__name__}: {exc})", file=sys.stderr)


def families() -> dict[str, FamilyDeclaration]:
    """Every declared family by game, in card order."""
    discover()
    with _LOCK:
        return dict(sorted(_FAMILIES.items(), key=lambda kv: (kv[1].order, kv[1].title)))


def title(game: str) -> str:
    """A family's title (the game's name when it declares none)."""
    family = families().get(game)
    return family.title if family is not None else game

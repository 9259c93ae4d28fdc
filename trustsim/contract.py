"""The game contract: one :class:`GameSpec` per game and the agents that play it, registered in code.

The engine never imports a game or an agent by name. It imports every package under ``games`` and then
under ``agents`` (plus modules named by the ``trustsim.plugins`` entry-point group, for third-party games),
and each package registers itself on import. Adding a game = adding its own folders
(``games/<name>/``, ``agents/<name>/``, ``conf/game/<name>.yaml``, ``conf/agent/<agent>.yaml``).

Registration goes agents → games: agents import the game's interface types (observation, decision,
policy base class); games never import agents.

A game registers in ``games/<name>/__init__.py``::

    from dataclasses import dataclass
    from trustsim.contract import GameSpec, register_game
    from trustsim.schema import opt

    @dataclass(frozen=True)
    class CoinOptions:                        # the schema of the `game` group; defaults included
        rounds: int = opt(10, min=1, world=True)  # world=True: part of the world (the world hash, its seeds)
        mode: Literal["a", "b"] = "a"         # choices; a misspelled key fails naming the closest valid one
        concurrency: int = opt(8, min=1, execution=True)  # how it runs, not what it computes: not hashed

    def _run(ctx):                            # import the runner lazily: discovery stays cheap
        from games.coin.job import run
        run(ctx)

    register_game(GameSpec(
        name="coin",                          # conf/game/coin.yaml has `type: coin` and the option defaults
        options=CoinOptions,
        tables={"moves": MOVE_COLUMNS, "predictions": prediction_schema(cell=("side",))},
        run=_run,
        example=("game=coin", "agent=coin_always"),  # a small, fast, offline job: the contract tests run it
    ))

Its agents register in ``agents/<name>/__init__.py``::

    from trustsim.contract import register_agent
    from agents.coin.always import Always       # subclasses games.coin.policy.CoinPolicy

    register_agent("coin", "coin_always", Always)               # params schema from Always.__init__
    register_agent("coin", "llm", LLMPlayer, uses_llm=True)     # or params=SomeDataclass

At run time the runner gets a :class:`trustsim.job.JobContext`: ``ctx.options`` (an instance of
``GameSpec.options``), ``ctx.groups`` (the game's other groups, typed), ``ctx.agent`` (the :class:`AgentSpec`),
``ctx.agent_params`` (validated ``agent`` group without ``name``), ``ctx.runs``, ``ctx.model`` (the typed
model config, None without an LLM), ``ctx.seeds`` (the seed tree: ``seed(...)``, ``rng(...)``,
``sample(...)``), ``ctx.recorder``, ``ctx.llm``, ``ctx.run_async(coro)`` (works inside a running event loop),
``ctx.progress``, ``ctx.set_cell``, ``ctx.count``; ``ctx.cfg`` is the recorded config (a plain dict: what the
manifest holds; a game reads the typed objects).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trustsim.errors import ConfigError, ParameterError
from trustsim.schema import did_you_mean, instantiate

if TYPE_CHECKING:
    from trustsim.config import Draft, Validated
    from trustsim.job import JobContext
    from trustsim.rundir.schema import EventUnit

PLUGIN_GROUP = "trustsim.plugins"
"""Entry-point group: each entry point names a module that registers games and/or agents on import."""

DISCOVERED_PACKAGES = ("games", "agents")


@dataclass(frozen=True)
class AgentSpec:
    """An agent registered for one game: its factory and the schema of its ``agent`` group."""

    game: str
    name: str
    factory: Callable[..., Any]
    params: type  # a dataclass: the schema of the `agent` group for this agent (without `name`)
    uses_llm: bool = False
    description: str = ""

    def build(
        self, params: Mapping[str, Any] | None = None, *, config_key: str = "agent", **extra: Any
    ) -> Any:
        """A fresh agent: ``factory(**params, **extra)``.

        Raises:
            ConfigError: the factory refused its parameters; the key is ``<config_key>.<parameter>`` when it
                raised a :class:`~trustsim.errors.ParameterError`, else ``config_key`` (the agent's group).
        """
        try:
            return self.factory(**dict(params or {}), **extra)
        except ParameterError as exc:
            raise ConfigError(f"{config_key}.{exc.parameter}", self._refused(exc)) from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(config_key, self._refused(exc)) from None

    def _refused(self, exc: Exception) -> str:
        return f"bad parameters for agent {self.name!r}: {exc}"


@dataclass(frozen=True)
class GameLength:
    """How a game's number of requests varies with the model's choices (preview reports a range).

    Attributes:
        note: Why the length varies, and what the upper and lower figures assume.
        skipped_by_shortest_play: ``f(request) -> bool``: whether the shortest play would not make this
            request (a ``trustsim.preview.client.Request``: ``purpose``, ``name``, ``round``).
        upper_play: Optional ``f(options) -> trustsim.preview.standin.Play`` (the typed ``game`` group): how
            preview's stand-in plays so that its figures are the upper ones; default: the stand-in's own
            choices.
    """

    note: str
    skipped_by_shortest_play: Callable[[Any], bool]
    upper_play: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class PlayUnit:
    """A game's unit of play (an escape-room game, an arena match): how the run directory brackets it with
    events and how ``python -m trustsim.status`` counts it. The job records it in the manifest at start
    (:meth:`record`), so reading a run directory needs no game registry.

    Attributes:
        events: The :class:`~trustsim.rundir.schema.EventUnit`: the start and end event types and how events and
            table rows name one unit. The recorder writes out everything buffered before each start event
            (a kill loses at most the unit in progress); the reader's damage rule keeps the table rows of
            units whose events are intact.
        counted: The manifest ``counts`` key that counts units done (e.g. ``"games"``); status shows it as the
            unit's name (``3/11 games``).
        per_run: Optional ``per_run(valid) -> int | None``: the units one run (replicate session) of a
            validated config (:class:`trustsim.config.Validated`) plans. None (or no function): unknown until
            the job is complete.
        per_end: Optional ``per_end(valid) -> int``: the ``counted`` units one end event completes (default 1;
            e.g. a trust-game session ends once for all its pairs).
    """

    events: EventUnit
    counted: str
    per_run: Callable[[Validated], int | None] | None = None
    per_end: Callable[[Validated], int] | None = None

    def record(self, valid: Validated) -> dict[str, Any]:
        """The unit as ``manifest.json`` records it (``unit``): the event bracket, ``counted``, ``per_end``
        and ``planned`` (runs x ``per_run``; None when unknown at start)."""
        per = self.per_run(valid) if self.per_run is not None else None
        return {
            **self.events.to_dict(),
            "counted": self.counted,
            "per_end": self.per_end(valid) if self.per_end is not None else 1,
            "planned": None if per is None else valid.root.runs * per,
        }


@dataclass(frozen=True)
class ReasoningSource:
    """Reasoning texts of a game that ``python -m trustsim.extract --kind <name>`` asks an extractor model to turn
    into probabilities (post-hoc confidence; docs/calibration.md).

    Attributes:
        read: ``read(folder) -> Iterator[trustsim.extract.items.ReasoningItem]``: the items of one run folder.
        find: Optional ``find(root) -> list[Path]``: the run folders under a source directory, sorted (raises
            ``trustsim.extract.sources.SourceError`` when it cannot); default: every run directory
            (``manifest.json``) under it, an error when there is none.
        default: The source ``--kind`` defaults to (at most one registered source sets it).
    """

    read: Callable[[Path], Any]
    find: Callable[[Path], list[Path]] | None = None
    default: bool = False


@dataclass(frozen=True)
class GameSpec:
    """Everything the engine knows about a game.

    Attributes:
        name: The game's name; ``conf/game/<name>.yaml`` sets ``type: <name>``.
        options: Dataclass: the schema of the ``game`` group (fields, types, defaults, ranges and roles via
            :func:`trustsim.schema.opt`). Unknown keys fail naming the closest valid one. Fields marked
            ``world=True`` (here and in ``groups``) define the world: the world hash, hence every world random
            stream, derives from their values only (:mod:`trustsim.identity`). Fields marked
            ``execution=True`` change how the job runs, not what it computes (concurrency): they are left out
            of the config hash and of the world.
        tables: Table name → column names (or a schema object with ``columns``) the runner writes.
        run: The runner: ``run(ctx)`` plays the whole job into ``ctx.run_dir``.
        check: Optional cross-field rules: ``check(draft) -> list of warnings`` on the typed config (a
            :class:`trustsim.config.Draft`); raises :class:`~trustsim.errors.ConfigError` for an error. It may
            normalise the config by replacing ``draft.options`` or a group with an updated instance (e.g. a
            schedule pattern that differs from the named schedule is labelled ``custom``).
        groups: Other config groups the game reads, with their schemas (e.g. ``{"memory": MemoryOptions}``);
            the runner gets them typed (``ctx.groups``). A group the game does not read is left out of the
            run's config; a non-default value prints a warning that it has no effect.
        uses_llm: Optional ``uses_llm(draft) -> bool`` (a :class:`trustsim.config.Draft`, before ``check``)
            when more than the main agent can call a model (e.g. an LLM opponent); default:
            ``agent.uses_llm``.
        example: Overrides of a small, fast, offline job of this game (the contract tests run it).
        description: One line for listings.
        summary: Optional ``summary(run_dir) -> trustsim.summary.Family``: what the end-of-run summary says
            about a finished run of this game (read from its tables); default: the manifest's counts.
        analysis: The ``python -m analysis <subcommand>`` that analyses this game's runs (the summary's
            "next" line); empty: none.
        count_decisions: Optional ``count_decisions(valid) -> (units, decisions, upper_bound)`` of a validated
            config (a :class:`trustsim.config.Validated`): a job's plan before it runs (the trust-card battery
            prints it): a text such as ``"runs=5 x 11 games"``, the decisions of the agent under test, and
            whether that number is an upper bound.
        length: Optional :class:`GameLength`, when how many requests a job makes depends on the model's
            choices (preview reports a range); default: a fixed number of requests.
        unit: Optional :class:`PlayUnit`: the game's unit of play (the run directory's event units, the
            recorder's flush points, ``python -m trustsim.status``'s done/planned counts); default: none (the
            reader applies its file-level damage rule only, status shows no units, the recorder writes out
            at every ``session_start`` and once a second).
        reasoning: ``--kind`` name -> :class:`ReasoningSource`: where ``python -m trustsim.extract`` finds this
            game's reasoning texts; default: none.
        standin_text: Call purpose -> the text preview's stand-in answers to a free-text request of that
            purpose, in the form the game's agents parse (e.g. a line ``DECISION: Pass``); default: a neutral
            text (JSON answers are built from the request's answer schema).
        short_answers: Call purposes whose answers are short values (e.g. a number): preview expects them
            as short as the stand-in's answer until the request store holds real ones; other purposes: a
            reasoned answer (:data:`trustsim.preview.lengths.REASONED_ANSWER_TOKENS`).
        run_name: Optional ``run_name(options, groups) -> str | None``: the name of a job whose config sets
            none (no preset, no ``name=``), from the composed ``game`` group and the game's own groups,
            validated (typed; a group that does not validate names the job ``default``), e.g. the escape
            room's ``custom-TTFFT`` for a custom schedule; None (the default): ``default``.
    """

    name: str
    options: type
    tables: Mapping[str, Any]
    run: Callable[[JobContext], None]
    check: Callable[[Draft], list[str] | None] | None = None
    groups: Mapping[str, type] = field(default_factory=dict)
    uses_llm: Callable[[Draft], bool] | None = None
    example: tuple[str, ...] = ()
    description: str = ""
    summary: Callable[[Path], Any] | None = None
    analysis: str = ""
    count_decisions: Callable[[Validated], tuple[str, int, bool]] | None = None
    length: GameLength | None = None
    unit: PlayUnit | None = None
    reasoning: Mapping[str, ReasoningSource] = field(default_factory=dict)
    standin_text: Mapping[str, str] = field(default_factory=dict)
    short_answers: frozenset[str] = frozenset()
    run_name: Callable[[Any, dict[str, Any]], str | None] | None = None

    def options_of(self, cfg: Mapping[str, Any]) -> Any:
        """The typed options of a validated config's ``game`` group (an instance of :attr:`options`)."""
        return instantiate(self.options, {k: v for k, v in cfg["game"].items() if k != "type"})

    def table_columns(self, name: str) -> tuple[str, ...]:
        """Column names of one of the game's tables."""
        schema = self.tables[name]
        return tuple(getattr(schema, "columns", schema))


_GAMES: dict[str, GameSpec] = {}
_AGENTS: dict[str, dict[str, AgentSpec]] = {}
_LOCK = threading.RLock()
_discovered = False
_IMPORT_ERRORS: dict[str, str] = {}  # module → one-line error of a package that failed to import


def register_game(spec: GameSpec) -> GameSpec:
    """Register a game (idempotent for the same spec object; a different spec under a taken name fails)."""
    for key, schema in {
        "options": spec.options,
        **{f"groups[{g!r}]": s for g, s in spec.groups.items()},
    }.items():
        if not dataclasses.is_dataclass(schema):
            raise TypeError(f"GameSpec {spec.name!r}: {key} must be a dataclass, got {schema!r}")
    with _LOCK:
        old = _GAMES.get(spec.name)
        if old is not None and old is not spec and old.run is not spec.run:
            raise ValueError(f"game {spec.name!r} is already registered")
        _GAMES[spec.name] = spec
        _AGENTS.setdefault(spec.name, {})
    return spec


def register_agent(
    game: str,
    name: str,
    factory: Callable[..., Any],
    *,
    params: type | None = None,
    uses_llm: bool = False,
    description: str = "",
    exclude: Sequence[str] = (),
) -> AgentSpec:
    """Register an agent for ``game``.

    Args:
        game: The game's registered name (the game package is imported before any agent package).
        name: The agent's name, as in ``agent=<name>`` (``conf/agent/<name>.yaml`` sets ``name: <name>``).
        factory: Builds one agent from its parameters (usually the class).
        params: Dataclass schema of the ``agent`` group (without ``name``). ``None`` derives it from the
            factory's keyword parameters (annotations and defaults), leaving out ``exclude``.
        uses_llm: The agent calls a language model (the ``model`` group then matters).
        description: One line for listings.
        exclude: Factory parameters that the game supplies itself (e.g. ``memory``): not config keys.
    """
    schema = params if params is not None else params_from_signature(factory, name, exclude)
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"agent {name!r}: params must be a dataclass, got {schema!r}")
    spec = AgentSpec(game, name, factory, schema, uses_llm, description)
    with _LOCK:
        _AGENTS.setdefault(game, {})[name] = spec
    return spec


def unregister_agent(game: str, name: str) -> None:
    """Remove an agent (tests register throwaway agents)."""
    with _LOCK:
        _AGENTS.get(game, {}).pop(name, None)


def params_from_signature(factory: Callable[..., Any], name: str, exclude: Sequence[str] = ()) -> type:
    """A dataclass whose fields are ``factory``'s keyword parameters with defaults."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = inspect.get_annotations(target, eval_str=True)
    except Exception:
        hints = {}
    fields: list[tuple[str, Any, Any]] = []
    for p in inspect.signature(target).parameters.values():
        if p.name in ("self", *exclude) or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is inspect.Parameter.empty:
            raise TypeError(f"agent {name!r}: parameter {p.name!r} needs a default (or pass params=)")
        hint = hints.get(p.name, Any)
        default = p.default
        if isinstance(default, list | dict | set):
            fields.append((p.name, hint, field(default_factory=functools.partial(type(default), default))))
        else:
            fields.append((p.name, hint, field(default=default)))
    return dataclasses.make_dataclass(f"{name}_params", fields, frozen=True)


def discover() -> None:
    """Import every game package, then every agent package, then the plugin entry points (once)."""
    global _discovered
    with _LOCK:
        if _discovered:
            return
        _discovered = True
        for package in DISCOVERED_PACKAGES:
            try:
                root = importlib.import_module(package)
            except ImportError:
                continue
            for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
                if info.ispkg:
                    _import(f"{package}.{info.name}")
        for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
            _import(ep.value.split(":")[0])


def _import(module: str) -> None:
    """Import a game/agent/plugin package; a broken one does not stop the others (it is reported when its
    game is asked for, and printed as a warning)."""
    try:
        importlib.import_module(module)
    except Exception as exc:
        message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        _IMPORT_ERRORS[module] = message
        print(f"trustsim: warning: cannot import {module} ({message})", file=sys.stderr)


def games() -> dict[str, GameSpec]:
    """Every registered game, by name."""
    discover()
    return dict(sorted(_GAMES.items()))


def game_spec(name: str) -> GameSpec:
    """The registered game ``name``; a ConfigError at ``game`` (naming the closest game) if unknown."""
    known = games()
    if name not in known:
        broken = "".join(f"; {m} failed to import: {e}" for m, e in _IMPORT_ERRORS.items() if name in m)
        raise ConfigError(
            "game",
            f"unknown game {name!r}{did_you_mean(name, known)} (registered: {', '.join(known)}){broken}",
        )
    return known[name]


def game_options(cfg: Mapping[str, Any]) -> Any:
    """The typed options of a validated config's ``game`` group (e.g. in a game's cross-field ``check``)."""
    return game_spec(cfg["game"]["type"]).options_of(cfg)


def agents_for(game: str) -> dict[str, AgentSpec]:
    """The agents registered for ``game``, by name."""
    discover()
    return dict(sorted(_AGENTS.get(game, {}).items()))


def agent_spec(game: str, name: str, key: str = "agent") -> AgentSpec:
    """The agent ``name`` of ``game``; a ConfigError at ``key`` naming the closest agent if unknown."""
    available = agents_for(game)
    if name not in available:
        raise ConfigError(
            key,
            f"agent {name!r} is not available for game {game!r}{did_you_mean(name, available)} "
            f"(available: {', '.join(available)})",
        )
    return available[name]

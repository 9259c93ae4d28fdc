"""trustsim's games as Inspect tasks: ``inspect eval trustsim/<task> --model <model> [-T name=value ...]``.

Every task takes ``seed`` (the first sample's seed), ``model_preset`` (the trustsim model preset whose
decoding settings the seats use; default ``openai_compatible``) and ``overrides`` (any trustsim override,
e.g. ``-T overrides='[game.games=3, agent.transcript_max_events=50]'``). ``agent`` chooses who plays (default
``llm``: the model; an offline agent such as ``bayes`` needs none). The tasks are registered under
``trustsim/`` by :mod:`trustsim.inspect_tasks` (the ``inspect_ai`` entry point of the package).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from trustsim import __version__
from trustsim.battery import SIZES, parts
from trustsim_inspect.samples import DEFAULT_PRESET, SampleJob, as_list, compose_base, plan_samples
from trustsim_inspect.scoring import deltas, headline, trustsim_scorer
from trustsim_inspect.solver import play

Overrides = str | Sequence[str] | None


def _given(**keys: object) -> list[str]:
    """Overrides for the task parameters that were given (None: the experiment's own value)."""
    return [f"{key}={value}" for key, value in keys.items() if value is not None]


def _jobs(experiments: Sequence[str | None], overrides: list[str], preset: str) -> list[SampleJob]:
    jobs: list[SampleJob] = []
    for experiment in experiments:
        cfg = compose_base(experiment, overrides, preset)
        recorded = [*([f"+experiment={experiment}"] if experiment else []), f"model={preset}", *overrides]
        jobs += plan_samples(cfg, recorded)
    return jobs


def describe(job: SampleJob) -> str:
    """The sample's input: what its job plays."""
    cell = {k: v for k, v in job.cell.items() if v not in (None, "") and k not in ("family", "unit")}
    what = ", ".join(f"{k} {v}" for k, v in cell.items())
    return f"Play one trustsim {job.family} {job.cell.get('unit', 'unit')} ({what})."


def build_task(name: str, jobs: list[SampleJob]) -> Task:
    """The Inspect task of ``jobs``: one sample each, the play solver, the scorer and the metrics."""
    seen: set[str] = set()
    for job in jobs:
        if job.id in seen:
            raise ValueError(f"two samples of task {name} have the id {job.id!r}")
        seen.add(job.id)
    samples = [
        Sample(id=j.id, input=describe(j), metadata={**j.cell, "trustsim_overrides": list(j.overrides)})
        for j in jobs
    ]
    families = {j.family for j in jobs}
    return Task(
        dataset=MemoryDataset(samples, name=name),
        solver=play({j.id: j for j in jobs}),
        scorer=trustsim_scorer(),
        metrics=[headline(), *([deltas()] if "escape_room" in families else [])],
        metadata={"trustsim_version": __version__, "families": sorted(families)},
    )


def escape_room(
    experiment: str | Sequence[str] = "mid2strike",
    runs: int = 1,
    seed: int = 0,
    agent: str = "llm",
    memory: str | None = None,
    prompt: str | None = None,
    model_preset: str = DEFAULT_PRESET,
    overrides: Overrides = None,
) -> Task:
    """Escape room: one sample per session (``runs`` sessions per experiment). Several experiments
    (``-T experiment=anchor,smooth,1strike``) give the formation and targeting deltas against the anchor."""
    over = [
        f"agent={agent}",
        *_given(seed=seed, runs=runs, memory=memory),
        *_given(**{"agent.prompt": prompt}),
    ]
    return build_task("escape_room", _jobs(as_list(experiment), [*over, *as_list(overrides)], model_preset))


def reliance(
    set: str = "main",
    limit: int | None = None,
    runs: int = 1,
    seed: int = 0,
    agent: str = "llm",
    model_preset: str = DEFAULT_PRESET,
    overrides: Overrides = None,
) -> Task:
    """Reliance scenarios: one sample per scenario (per controlled-history pair for ``set=pairs``) and
    replicate; ``limit`` takes the first scenarios (pairs) after the filters."""
    over = [
        f"agent={agent}",
        f"game.set={set}",
        *_given(**{"game.limit": limit}),
        *_given(seed=seed, runs=runs),
    ]
    return build_task("reliance", _jobs(["reliance"], [*over, *as_list(overrides)], model_preset))


def arena(
    experiment: str = "ipd",
    runs: int = 1,
    seed: int = 0,
    agent: str = "llm",
    opponent: str | None = None,
    rounds: int | None = None,
    model_preset: str = DEFAULT_PRESET,
    overrides: Overrides = None,
) -> Task:
    """Iterated prisoner's dilemma: one sample per match (a round robin per sample with
    ``experiment=ipd_tournament``); ``--model-role opponent=<model>`` makes the opponent that model."""
    over = [
        f"agent={agent}",
        *_given(seed=seed, runs=runs),
        *_given(**{"game.opponent": opponent, "game.rounds": rounds}),
    ]
    return build_task("arena", _jobs([experiment], [*over, *as_list(overrides)], model_preset))


def trust_game(
    experiment: str = "trust_game",
    pairs: int | None = None,
    runs: int = 1,
    seed: int = 0,
    agent: str = "llm",
    trustor: str | None = None,
    trustee: str | None = None,
    model_preset: str = DEFAULT_PRESET,
    overrides: Overrides = None,
) -> Task:
    """Trust game: one sample per pair (``pairs`` × ``runs``); ``--model-role trustor=...`` or
    ``trustee=...`` gives a role its own model."""
    over = [f"agent={agent}", *_given(seed=seed, runs=runs)]
    over += _given(**{"game.pairs": pairs, "game.trustor": trustor, "game.trustee": trustee})
    return build_task("trust_game", _jobs([experiment], [*over, *as_list(overrides)], model_preset))


def trust_card(
    size: str = "full",
    seed: int = 0,
    model_preset: str = DEFAULT_PRESET,
    overrides: Overrides = None,
) -> Task:
    """The trust-card battery (every game family, sizes as ``+experiment=trustcard card.size=...``): its parts'
    units of play as samples; ``python -m analysis from-inspect`` then ``analysis card`` make the card."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    jobs: list[SampleJob] = []
    for part in parts():
        over = [f"+card/part={part}", f"card.size={size}", f"seed={seed}", *as_list(overrides)]
        cfg = compose_base("trustcard", over, model_preset)
        jobs += plan_samples(
            cfg, ["+experiment=trustcard", f"model={model_preset}", *over], prefix=f"{part}/"
        )
    return build_task("trust_card", jobs)


TASKS: dict[str, Callable[..., Task]] = {
    "escape_room": escape_room,
    "reliance": reliance,
    "arena": arena,
    "trust_game": trust_game,
    "trust_card": trust_card,
}
"""The task factories, by the name Inspect knows them as (``trustsim/<name>``)."""

"""The ``inspect_ai`` entry point of the package: trustsim's Inspect tasks under the ``trustsim/`` namespace.

Inspect names a task after the top-level package of the module that registers it, so ``inspect eval
trustsim/<task>`` needs the registration here; the tasks themselves (every game's unit of play, the
transport, scores and metrics) live in :mod:`trustsim_inspect.tasks`. Only Inspect imports this module
(through the entry point): ``import trustsim`` never imports inspect-ai.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from inspect_ai import task

from trustsim_inspect.tasks import TASKS


def _register(name: str, factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory`` registered with Inspect as ``trustsim/<name>`` (its parameters are the task's ``-T``)."""

    @functools.wraps(factory)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return factory(*args, **kwargs)

    wrapper.__module__ = __name__  # the registry's namespace is the module's package: trustsim
    return task(name=name)(wrapper)


REGISTERED = {name: _register(name, factory) for name, factory in TASKS.items()}

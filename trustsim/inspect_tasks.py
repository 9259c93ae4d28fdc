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
from inspect_ai._util.registry import registry_name

from trustsim_inspect.tasks import TASKS

NAMESPACE = "trustsim"


def _register(name: str, factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory`` registered with Inspect as ``trustsim/<name>`` (its parameters are the task's ``-T``)."""

    @functools.wraps(factory)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return factory(*args, **kwargs)

    wrapper.__module__ = __name__  # Inspect's namespace is the registering module's package: trustsim
    # Inspect prefixes the package only when it finds trustsim installed; from a checkout, the
    # trustsim.egg-info an editable install leaves there shadows the install's metadata (no direct_url.json),
    # and Inspect finds none: the name then carries the namespace itself.
    qualified = f"{NAMESPACE}/{name}"
    return task(name=name if registry_name(wrapper, name) == qualified else qualified)(wrapper)


REGISTERED = {name: _register(name, factory) for name, factory in TASKS.items()}

"""Where a job's async part runs when a launcher runs many jobs in one process (``hydra/launcher=trustsim``).

A job runs in a worker thread of the launcher. Its synchronous parts (validation, manifest, tables) stay in
that thread; its async part (``ctx.run_async(coro)``: the game's play, every LLM call) runs either on the
sweep's **shared event loop**, where the requests of every job meet their endpoints' shared limits, or, for a
job that calls no model (a scripted job: CPU-bound, nothing to wait for), on a **private loop** in its own
thread, so that its computation never holds up the shared loop. Either way the launcher can interrupt it
(Ctrl-C): the coroutine is cancelled, and the job sees ``KeyboardInterrupt``, as a single run would, and
leaves an ``interrupted`` manifest.

A single run (``python -m trustsim``, :func:`trustsim.api.run`) has no runtime: its async part runs on its
own loop (:func:`trustsim.job.run_coroutine`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Interrupt:
    """A sweep's interruption: set once; cancels every job coroutine running or registered after."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._cancels: set[Callable[[], Any]] = set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        with self._lock:
            self._event.set()
            cancels = list(self._cancels)
        for cancel in cancels:
            cancel()

    def watch(self, cancel: Callable[[], Any]) -> Callable[[], None]:
        """Call ``cancel`` when interrupted (at once if already); returns the function that stops watching."""
        with self._lock:
            if not self._event.is_set():
                self._cancels.add(cancel)
                return lambda: self._forget(cancel)
        cancel()
        return lambda: None

    def _forget(self, cancel: Callable[[], Any]) -> None:
        with self._lock:
            self._cancels.discard(cancel)


class Runtime:
    """How one job of a sweep runs its async part and reports progress (see the module docstring).

    Args:
        loop: The sweep's shared event loop (a job that calls models), or None: a private loop in the job's
            thread (a job that calls none).
        interrupt: The sweep's :class:`Interrupt`.
        progress: ``progress(total, desc)``: the job's progress reporter (the sweep's progress counts it).
        hydra: The job's own Hydra settings (its ``hydra`` node; Hydra's ``HydraConfig`` is a process-wide
            singleton that holds the sweep's while jobs run at once), for the job's ``.hydra/`` record.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop | None,
        interrupt: Interrupt,
        progress: Callable[[int, str], Any],
        hydra: dict[str, Any] | None = None,
    ) -> None:
        self.loop = loop
        self.interrupt = interrupt
        self.progress = progress
        self.hydra = hydra

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion from the job's thread; ``KeyboardInterrupt`` when the sweep is interrupted."""
        if self.interrupt.is_set:
            coro.close()
            raise KeyboardInterrupt
        if self.loop is None:
            return self._run_private(coro)
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        stop = self.interrupt.watch(future.cancel)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise KeyboardInterrupt from None
        finally:
            stop()

    def _run_private(self, coro: Coroutine[Any, Any, T]) -> T:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            task = loop.create_task(coro)
            stop = self.interrupt.watch(lambda: _cancel_soon(loop, task))
            try:
                return runner.run(_wait(task))
            except asyncio.CancelledError:
                raise KeyboardInterrupt from None
            finally:
                stop()


async def _wait(task: asyncio.Task[T]) -> T:
    return await task


def _cancel_soon(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the task is done
        loop.call_soon_threadsafe(task.cancel)

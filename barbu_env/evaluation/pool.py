"""Worker processes of the evaluation's runners: :func:`in_processes` maps a function over tasks in a pool of
``spawn`` processes, each of which builds its player once; Ctrl-C is left to the parent, which stops the workers."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ..agents import parse_spec, split_external

#: What this worker process built (:func:`_init`).
_BUILT: Any = None


def _init(build: Callable[..., Any], args: tuple[Any, ...]) -> None:
    global _BUILT
    # the parent handles Ctrl-C; one thread per worker: several workers each spinning several threads thrash
    # (torch reads this at import)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    _BUILT = build(*args)


def _call_many(fn: Callable[[Any, Any], Any], payloads: Sequence[Any]) -> list[Any]:
    return [fn(_BUILT, p) for p in payloads]


def check_importable(specs: Sequence[str]) -> None:
    """``ValueError`` for an agent defined in ``__main__`` (``"__main__:Name"``), which worker processes cannot see."""
    for spec in specs:
        external = split_external(parse_spec(spec)[0])
        if external is not None and external[0] == "__main__":
            raise ValueError(f"agent {spec!r} is defined in __main__, which worker processes cannot import: use "
                             "workers=1 or define it in a module or file")  # fmt: skip


def in_processes(n: int, build: Callable[..., Any], args: tuple[Any, ...], fn: Callable[[Any, Any], Any],
                 payloads: Sequence[Any], chunksize: int = 1) -> Iterator[Any]:  # fmt: skip
    """``fn(built, payload)`` for every payload, in ``n`` worker processes, each of which first runs
    ``built = build(*args)``; results in the order they finish (``chunksize`` payloads a task). ``build`` and ``fn``:
    module-level functions or classes (they travel by name). A worker that dies (its initializer's error, killed, or
    a script without an ``if __name__ == "__main__":`` guard, which each worker would run again) stops the run with a
    ``RuntimeError`` saying so, instead of leaving it waiting; on any exit the workers are stopped."""
    executor = ProcessPoolExecutor(n, mp_context=mp.get_context("spawn"), initializer=_init, initargs=(build, args))
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # the workers start with Ctrl-C ignored
    try:
        futures = [executor.submit(_call_many, fn, payloads[i : i + chunksize])
                   for i in range(0, len(payloads), chunksize)]  # fmt: skip
    finally:
        if main:
            signal.signal(signal.SIGINT, old)
    finished = False
    try:
        for future in as_completed(futures):
            yield from future.result()
        finished = True
    except BrokenProcessPool:
        raise RuntimeError(
            "a worker process of the evaluation stopped before its boards were played (its error, if it had one, is "
            "printed above). If the script that calls the evaluation has no 'if __name__ == \"__main__\":' guard, "
            "every worker runs it again and fails: put the call under that guard, or use workers=1"
        ) from None
    finally:
        if not finished:  # an error or Ctrl-C: stop the workers now (the futures still queued are dropped)
            processes = getattr(executor, "_processes", None) or {}  # (no public way to stop them before 3.14)
            for process in list(processes.values()):
                process.terminate()
        executor.shutdown(wait=True, cancel_futures=True)

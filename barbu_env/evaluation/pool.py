"""Worker processes of the evaluation's runners: :func:`in_processes` maps a function over tasks in a pool of
``spawn`` processes, each of which builds its player once; Ctrl-C is left to the parent, which stops the pool."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
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


def _call(task: tuple[Callable[[Any, Any], Any], Any]) -> Any:
    fn, payload = task
    return fn(_BUILT, payload)


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
    ``built = build(*args)``; results in the order they finish. ``build`` and ``fn``: module-level functions or
    classes (they travel by name)."""
    ctx = mp.get_context("spawn")
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # workers start with Ctrl-C ignored
    try:
        pool = ctx.Pool(n, initializer=_init, initargs=(build, args))
    finally:
        if main:
            signal.signal(signal.SIGINT, old)
    with pool:
        yield from pool.imap_unordered(_call, [(fn, p) for p in payloads], chunksize=chunksize)

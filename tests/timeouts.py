"""A time limit for one call in the tests: bad input must be refused quickly, never hang."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class CallTimedOut(AssertionError):
    """The call under :func:`time_limit` ran past its limit (a hang, or a loop over a huge value)."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str = "the call") -> Iterator[None]:
    """Fail with :class:`CallTimedOut` when the block runs longer than ``seconds`` (SIGALRM, main thread only;
    elsewhere the block runs without a limit). Warm numba's kernels before using it: an alarm inside a compile
    would break it."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise CallTimedOut(f"{what} ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

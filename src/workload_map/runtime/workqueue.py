"""A work queue with client-go's semantics, and worker threads that drain it.

- **De-duplication**: a key added several times before a worker picks it up is processed once.
- **No concurrent processing of one key**: a key added while a worker processes it is queued
  again only when that worker calls :meth:`WorkQueue.done`.
- **Rate-limited retries**: :meth:`WorkQueue.add_rate_limited` re-adds a key after a per-key
  exponential backoff (``base * 2**failures``, capped); :meth:`WorkQueue.forget` resets it.
- **Delayed adds**: :meth:`WorkQueue.add_after`.
- **Shutdown**: :meth:`WorkQueue.shut_down` wakes every waiting :meth:`WorkQueue.get` (which
  then returns ``None``); keys added afterwards are ignored.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["RateLimiter", "WorkQueue", "WorkerPool", "run_workers"]

K = TypeVar("K", bound=Hashable)
log = logging.getLogger(__name__)


class RateLimiter(Generic[K]):
    """Per-key exponential backoff: ``min(max_delay, base * 2**n)`` for the key's n-th failure."""

    def __init__(self, base: float = 0.005, max_delay: float = 60.0) -> None:
        self.base = base
        self.max_delay = max_delay
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def when(self, key: K) -> float:
        with self._lock:
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
        return float(min(self.max_delay, self.base * (2**n)))

    def forget(self, key: K) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        with self._lock:
            return self._failures.get(key, 0)


class WorkQueue(Generic[K]):
    """A FIFO of keys with de-duplication, per-key exclusivity, delayed and rate-limited adds.

    Thread-safe. ``clock`` (monotonic seconds) is injectable for tests.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[K] | None = None,
        *,
        name: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.rate_limiter: RateLimiter[K] = rate_limiter or RateLimiter()
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._delayed: list[tuple[float, int, K]] = []
        self._seq = itertools.count()
        self._shutting_down = False
        #: Keys handed to workers so far (diagnostics).
        self.processed = 0

    # --------------------------------------------------------------------------------- adding

    def add(self, key: K) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return  # queued again by done()
        self._queue.append(key)
        self._cond.notify()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` once ``delay`` seconds have passed (at once when ``delay <= 0``)."""
        with self._cond:
            if self._shutting_down:
                return
            if delay <= 0:
                self._add_locked(key)
                return
            heapq.heappush(self._delayed, (self._clock() + delay, next(self._seq), key))
            self._cond.notify_all()

    def add_rate_limited(self, key: K) -> None:
        """Re-add ``key`` after its backoff (which doubles with each call until :meth:`forget`)."""
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """Stop tracking ``key``'s failures (call after it was processed successfully)."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self.rate_limiter.num_requeues(key)

    # ------------------------------------------------------------------------------- taking

    def _promote_due_locked(self) -> float | None:
        """Move due delayed keys into the queue; return seconds until the next one (or None)."""
        now = self._clock()
        while self._delayed and self._delayed[0][0] <= now:
            _, _, key = heapq.heappop(self._delayed)
            self._add_locked(key)
        return self._delayed[0][0] - now if self._delayed else None

    def get(self, timeout: float | None = None) -> K | None:
        """The next key (the caller must call :meth:`done` with it), or ``None`` on shutdown or
        when ``timeout`` passes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                wait = self._promote_due_locked()
                if self._queue:
                    key = self._queue.popleft()
                    self._dirty.discard(key)
                    self._processing.add(key)
                    self.processed += 1
                    return key
                if self._shutting_down:
                    return None
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def done(self, key: K) -> None:
        """Mark ``key`` processed; if it was added meanwhile it goes back in the queue."""
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty and not self._shutting_down:
                self._queue.append(key)
                self._cond.notify()

    # -------------------------------------------------------------------------------- state

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def pending_delayed(self) -> int:
        with self._cond:
            return len(self._delayed)

    def is_processing(self, key: K) -> bool:
        with self._cond:
            return key in self._processing

    def shut_down(self) -> None:
        with self._cond:
            self._shutting_down = True
            self._queue.clear()
            self._dirty.clear()
            self._delayed.clear()
            self._cond.notify_all()

    @property
    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down


class WorkerPool(Generic[K]):
    """Threads that take keys from a queue and call ``process(key)``.

    A ``process`` that raises gets the key re-added with backoff, at most ``max_retries`` times
    (then the key is dropped and ``on_give_up(key, exc)`` is told); success forgets its failures.
    """

    def __init__(
        self,
        queue: WorkQueue[K],
        process: Callable[[K], None],
        *,
        count: int = 1,
        max_retries: int = 5,
        on_give_up: Callable[[K, BaseException], None] | None = None,
        name: str = "worker",
    ) -> None:
        self.queue = queue
        self.process = process
        self.max_retries = max_retries
        self.on_give_up = on_give_up
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True) for i in range(max(1, count))
        ]

    def start(self) -> WorkerPool[K]:
        for t in self._threads:
            t.start()
        return self

    def _run(self) -> None:
        while True:
            key = self.queue.get()
            if key is None:
                return
            try:
                self.process(key)
            except Exception as exc:
                if self.queue.num_requeues(key) < self.max_retries:
                    log.debug("processing %r failed (%s); retrying with backoff", key, exc)
                    self.queue.add_rate_limited(key)
                else:
                    log.warning("processing %r failed %d times; giving up: %s", key, self.max_retries, exc)
                    self.queue.forget(key)
                    if self.on_give_up is not None:
                        self.on_give_up(key, exc)
            else:
                self.queue.forget(key)
            finally:
                self.queue.done(key)

    def stop(self, timeout: float = 5.0) -> None:
        """Shut the queue down and wait for the workers to finish their current key."""
        self.queue.shut_down()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))


def run_workers(
    queue: WorkQueue[K],
    process: Callable[[K], None],
    *,
    count: int = 1,
    max_retries: int = 5,
    on_give_up: Callable[[K, BaseException], None] | None = None,
    name: str = "worker",
) -> WorkerPool[K]:
    """Start ``count`` worker threads on ``queue`` (see :class:`WorkerPool`)."""
    return WorkerPool(
        queue, process, count=count, max_retries=max_retries, on_give_up=on_give_up, name=name
    ).start()

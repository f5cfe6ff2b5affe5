"""WorkQueue semantics: de-duplication, per-key exclusivity, delayed and rate-limited adds."""

from __future__ import annotations

import threading
import time

from workload_map.runtime import RateLimiter, WorkQueue, run_workers


def test_dedupe_before_processing() -> None:
    q: WorkQueue[str] = WorkQueue()
    for key in ("a", "b", "a", "a", "c", "b"):
        q.add(key)
    assert len(q) == 3
    got = [q.get(0.1) for _ in range(3)]
    assert got == ["a", "b", "c"]
    assert q.get(0.05) is None


def test_key_added_while_processing_is_requeued_on_done_only() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert q.get(0.1) == "a"
    q.add("a")  # while processing: not handed out to another worker
    q.add("a")
    assert len(q) == 0
    assert q.get(0.05) is None
    q.done("a")
    assert len(q) == 1
    assert q.get(0.1) == "a"
    q.done("a")
    assert q.get(0.05) is None


def test_no_concurrent_processing_of_one_key() -> None:
    q: WorkQueue[int] = WorkQueue()
    active: dict[int, int] = {}
    overlap: list[int] = []
    counts: dict[int, int] = {}
    lock = threading.Lock()

    def process(key: int) -> None:
        with lock:
            active[key] = active.get(key, 0) + 1
            if active[key] > 1:
                overlap.append(key)
            counts[key] = counts.get(key, 0) + 1
        time.sleep(0.002)
        with lock:
            active[key] -= 1

    pool = run_workers(q, process, count=8)
    for _ in range(200):
        for k in range(5):
            q.add(k)
        time.sleep(0.0005)
    deadline = time.monotonic() + 5
    while (len(q) or any(q.is_processing(k) for k in range(5))) and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.stop()
    assert overlap == []
    assert set(counts) == set(range(5))
    # de-duplicated: far fewer runs than the 1000 adds
    assert sum(counts.values()) < 1000


def test_add_after_and_rate_limited_backoff() -> None:
    now = [100.0]
    q: WorkQueue[str] = WorkQueue(RateLimiter(base=1.0, max_delay=4.0), clock=lambda: now[0])
    q.add_after("x", 5.0)
    assert q.get(0.01) is None
    now[0] += 5.0
    assert q.get(0.01) == "x"
    q.done("x")
    # exponential per-key delays: 1, 2, 4, 4 (capped)
    assert [q.rate_limiter.when("k") for _ in range(4)] == [1.0, 2.0, 4.0, 4.0]
    assert q.num_requeues("k") == 4
    q.forget("k")
    assert q.num_requeues("k") == 0
    q.add_rate_limited("k")
    assert q.get(0.01) is None
    now[0] += 1.0
    assert q.get(0.01) == "k"


def test_worker_retries_with_backoff_then_gives_up() -> None:
    q: WorkQueue[str] = WorkQueue(RateLimiter(base=0.001, max_delay=0.01))
    attempts: list[float] = []
    gave_up: list[str] = []
    done = threading.Event()

    def process(key: str) -> None:
        attempts.append(time.monotonic())
        raise RuntimeError("boom")

    def give_up(key: str, exc: BaseException) -> None:
        gave_up.append(key)
        done.set()

    pool = run_workers(q, process, count=2, max_retries=3, on_give_up=give_up)
    q.add("bad")
    assert done.wait(5)
    pool.stop()
    assert len(attempts) == 4  # first try + 3 retries
    assert gave_up == ["bad"]
    assert q.num_requeues("bad") == 0


def test_success_after_failure_forgets() -> None:
    q: WorkQueue[str] = WorkQueue(RateLimiter(base=0.001))
    calls: list[str] = []
    ok = threading.Event()

    def process(key: str) -> None:
        calls.append(key)
        if len(calls) < 3:
            raise RuntimeError("transient")
        ok.set()

    pool = run_workers(q, process)
    q.add("k")
    assert ok.wait(5)
    time.sleep(0.02)
    pool.stop()
    assert calls == ["k", "k", "k"]
    assert q.num_requeues("k") == 0


def test_shutdown_wakes_getters_and_ignores_adds() -> None:
    q: WorkQueue[str] = WorkQueue()
    results: list[str | None] = []
    t = threading.Thread(target=lambda: results.append(q.get()))
    t.start()
    time.sleep(0.05)
    q.shut_down()
    t.join(2)
    assert results == [None]
    q.add("late")
    assert len(q) == 0 and q.shutting_down

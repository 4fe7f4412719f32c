"""once_property: each instance's value built once, even when threads ask at once."""

from __future__ import annotations

import copy
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from factories import WriteLines, rec, req, res, ts

import mcptrace
import mcptrace.trace as trace_module
from mcptrace._once import once_property
from mcptrace.linter import lint


class Slow:
    """A property whose build takes a while and is counted."""

    def __init__(self, barrier: threading.Barrier | None = None) -> None:
        self.builds = 0
        self.barrier = barrier

    @once_property
    def value(self) -> list[int]:
        """The built value."""
        self.builds += 1
        if self.barrier is not None:
            self.barrier.wait(timeout=5)  # BrokenBarrierError unless both build at once
        time.sleep(0.05)
        return [self.builds]


def test_threads_asking_at_once_share_one_build() -> None:
    slow = Slow()
    with ThreadPoolExecutor(max_workers=8) as pool:
        values = list(pool.map(lambda _: slow.value, range(8)))
    assert slow.builds == 1
    assert all(v is values[0] for v in values)
    assert values[0] == [1]


def test_instances_build_side_by_side() -> None:
    # functools.cached_property in Python 3.11 holds one lock per property for every
    # instance: the second build would wait for the first and the barrier would break
    barrier = threading.Barrier(2)
    pair = [Slow(barrier), Slow(barrier)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        values = list(pool.map(lambda s: s.value, pair))
    assert values == [[1], [1]]


def test_a_failed_build_keeps_nothing() -> None:
    class Flaky:
        calls = 0

        @once_property
        def value(self) -> int:
            type(self).calls += 1
            if type(self).calls == 1:
                raise RuntimeError("first build fails")
            return 7

    flaky = Flaky()
    with pytest.raises(RuntimeError, match="first build fails"):
        _ = flaky.value
    assert "value" not in vars(flaky)
    assert flaky.value == 7
    assert flaky.value == 7
    assert Flaky.calls == 2


def test_behaves_like_cached_property() -> None:
    slow = Slow()
    assert isinstance(Slow.value, once_property)
    assert Slow.value.__doc__ == "The built value."
    vars(slow)["value"] = ["given"]  # set in the instance dict: never built
    assert slow.value == ["given"]
    assert slow.builds == 0
    del vars(slow)["value"]
    assert slow.value == [1]
    slow.value = ["assigned"]  # type: ignore[misc]
    assert slow.value == ["assigned"]
    # nothing unpicklable (no lock) is left behind once the value is built
    assert copy.deepcopy(slow).value == ["assigned"]


def test_a_trace_identifies_its_sessions_once(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calls find the identity on a thread of their own while the linter asks for it
    on another: it is built once, whatever the Python version."""
    path = write_lines(
        [
            rec(req(1, "tools/list"), ts=ts(0)),
            rec(res(1, {"tools": []}), dir="s2c", ts=ts(0.1)),
        ]
    )
    built = 0
    real = trace_module.identify

    def slow_identify(*args: Any, **kwargs: Any) -> Any:
        nonlocal built
        built += 1
        time.sleep(0.1)
        return real(*args, **kwargs)

    monkeypatch.setattr(trace_module, "identify", slow_identify)
    trace = mcptrace.load(path)
    with ThreadPoolExecutor(max_workers=3) as pool:
        asked = [pool.submit(lambda: trace.calls), pool.submit(lambda: trace.identity)]
        asked.append(pool.submit(lambda: trace.identity))
        for future in asked:
            future.result()
    assert built == 1
    assert lint(trace).height == lint(mcptrace.load(path)).height
    assert built == 2  # the second trace's own

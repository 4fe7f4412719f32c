"""A property computed once per instance, on first use, even when threads ask at once.

Why not :func:`functools.cached_property`: the linter builds a trace's frames on two
threads (:mod:`mcptrace.linter.engine`), and a thread may ask for a frame another is
still building (the session identity while the calls are paired, say). Python 3.11's
``cached_property`` makes it wait, under one lock per property shared by every
instance; from 3.12 on it has no lock at all, and both threads would build the frame,
paying its time and holding it twice (the calls of 10^6 messages are ~0.1 GiB). Here
each instance has a lock per property, taken only while the value is missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

#: the instance-dict key of the locks of properties being built
_LOCKS = "__once_property_locks"


class once_property(Generic[T]):
    """Like :func:`functools.cached_property` (the value is kept in the instance's
    ``__dict__``, so assigning it or deleting it there works the same), but a value is
    built by one thread while others asking for it wait; instances do not wait on each
    other. A build that raises keeps nothing: the next access builds again."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> once_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | once_property[T]:
        if instance is None:
            return self
        cache: dict[str, Any] = instance.__dict__
        name = self.attrname
        if name in cache:  # only when another thread stored it since the lookup began
            found: T = cache[name]
            return found
        # dict.setdefault is atomic: threads that miss together get the same lock
        locks: dict[str, threading.RLock] = cache.setdefault(_LOCKS, {})
        with locks.setdefault(name, threading.RLock()):
            if name in cache:
                built: T = cache[name]
                return built
            try:
                value = self.func(instance)
                cache[name] = value
            finally:
                # a thread already waiting holds the lock object and finds the value;
                # later ones find it before looking for a lock
                locks.pop(name, None)
        return value


__all__ = ["once_property"]

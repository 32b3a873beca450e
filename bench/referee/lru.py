"""A small thread-safe LRU mapping: the mock's caches stay bounded whatever clients send.

A long-running ``schedbench mock serve`` sees as many distinct request bodies as its clients
care to send; a plain dict keyed by them would grow without limit. ``functools.lru_cache``
bounds a function, not a counter; this bounds a mapping with the few operations the mock
uses (``get``, ``[key] = value``, ``clear``, ``len``), under one lock because the sync
in-process transport may call the mock from several threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``maxsize`` entries; setting one more drops the least recently used."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    @overload
    def get(self, key: K) -> V | None: ...

    @overload
    def get(self, key: K, default: V) -> V: ...

    def get(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

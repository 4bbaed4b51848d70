"""The store a new gloo group of pgroups.torch rendezvous through.

Gloo connects a group's members through the store: each member sets one key with its
addresses, then waits for and reads every member's key, one after the other: 2n + 1 round
trips to the store's server per member of a group of n, which on a busy host are most of
a group's creation time. This store answers that exchange with three: gloo's set, then,
at its first wait, one wait for every member's key and one read of them all. Every other
operation goes to the default store unchanged.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import torch.distributed as dist

GLOO_LAZY_VARIABLE = "TORCH_GLOO_LAZY_INIT"


def gloo_is_lazy() -> bool:
    """Whether torch creates a gloo group's pairs lazily (at their first use) now."""
    return os.environ.get(GLOO_LAZY_VARIABLE, "0") not in ("", "0")


def rendezvous_store(default_store: Any, size: int) -> Any:
    """The store to create a group of ``size`` members with: a store of this process alone
    for one member; the default store where the exchange cannot be read at once (no
    ``multi_get``: torch 1.x) or is not gloo's eager one (``TORCH_GLOO_LAZY_INIT``: pairs
    connect on first use, each through keys of its own)."""
    if gloo_is_lazy() or not hasattr(default_store, "multi_get"):
        return default_store
    if size == 1:
        # A one-rank group only ever reads what it wrote itself: no round trip at all.
        return dist.HashStore()
    return ExchangeStore(default_store, size)


class ExchangeStore(dist.Store):
    """See the module. The exchange is recognised as gloo's first wait, for member 0's key
    (``<prefix>0``): every member's key is that prefix and the member's group rank."""

    def __init__(self, inner: Any, size: int) -> None:
        super().__init__()
        self._inner = inner
        self._size = size
        self._exchanged: Optional[Dict[str, bytes]] = None

    def _exchange(self, first: str, timeout: Any) -> None:
        prefix = first[:-1]
        keys = [f"{prefix}{member}" for member in range(self._size)]
        if timeout is None:
            self._inner.wait(keys)
        else:
            self._inner.wait(keys, timeout)
        self._exchanged = dict(zip(keys, self._inner.multi_get(keys)))

    def wait(self, keys: List[str], timeout: Any = None) -> None:  # noqa: D102
        if self._exchanged is None and len(keys) == 1 and keys[0].endswith("/0"):
            self._exchange(keys[0], timeout)
            return
        if self._exchanged is not None and all(key in self._exchanged for key in keys):
            return
        if timeout is None:
            self._inner.wait(keys)
        else:
            self._inner.wait(keys, timeout)

    def get(self, key: str) -> bytes:  # noqa: D102
        if self._exchanged is not None and key in self._exchanged:
            return self._exchanged[key]
        return self._inner.get(key)

    def set(self, key: str, value: Any) -> None:  # noqa: D102
        self._inner.set(key, value)

    def add(self, key: str, value: int) -> int:  # noqa: D102
        return self._inner.add(key, value)

    def compare_set(self, key: str, expected: Any, desired: Any) -> bytes:  # noqa: D102
        return self._inner.compare_set(key, expected, desired)

    def check(self, keys: List[str]) -> bool:  # noqa: D102
        return self._inner.check(keys)

    def delete_key(self, key: str) -> bool:  # noqa: D102
        return self._inner.delete_key(key)

    def num_keys(self) -> int:  # noqa: D102
        return self._inner.num_keys()

    def multi_get(self, keys: List[str]) -> List[bytes]:  # noqa: D102
        return self._inner.multi_get(keys)

    def multi_set(self, keys: List[str], values: List[Any]) -> None:  # noqa: D102
        self._inner.multi_set(keys, values)

    def append(self, key: str, value: Any) -> None:  # noqa: D102
        self._inner.append(key, value)

    def has_extended_api(self) -> bool:  # noqa: D102
        return True

    def set_timeout(self, timeout: Any) -> None:  # noqa: D102
        self._inner.set_timeout(timeout)

    @property
    def timeout(self) -> Any:  # noqa: D102
        return self._inner.timeout

"""The one validation layer of every entry point (Plan, Mesh, ParallelContext, pgroups.torch,
pgroups.colossal): Python's types, checked before anything reaches the C++ layer, so that no
argument is coerced (``int()``, ``bool()``) and no pybind11 signature dump reaches a user.

A wrong type is a ``TypeError`` naming the argument and the value; a value that breaks a rule
checked here is a :class:`pgroups.ConfigError` naming the argument, the value and the rule.
The rules about values (sizes, timeouts) are the C++ library's: what is checked here is only
what C++ cannot see (Python's types), except ``minimum`` where a caller asks for it.
"""

from __future__ import annotations

import datetime
import numbers
import operator
import os
from collections.abc import Mapping
from typing import Any, List, Literal, Optional, overload

from . import _pgroups


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:  # only the excerpt in the message is shortened, never the value
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _is_bool(value: Any) -> bool:
    # numpy.bool_ without importing numpy: it is no int subclass, but operator.index
    # accepted it in older numpy versions.
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"))


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


@overload
def check_int(name: str, value: Any, *, minimum: Optional[int] = None, allow_none: Literal[False] = False) -> int: ...
@overload
def check_int(name: str, value: Any, *, minimum: Optional[int] = None, allow_none: bool) -> Optional[int]: ...
def check_int(name: str, value: Any, *, minimum: Optional[int] = None, allow_none: bool = False) -> Optional[int]:
    """``value`` as an ``int``: an int or a numpy integer (anything with ``__index__``), never
    a bool, float or string. None only when ``allow_none``. TypeError otherwise; beyond a
    64-bit integer or below ``minimum``, ConfigError naming the argument, the value and the
    rule."""
    if value is None:
        if allow_none:
            return None
        raise TypeError(f"{name} must be an int, not None")
    if _is_bool(value) or isinstance(value, (str, bytes, float)):
        raise TypeError(f"{name} must be an int, not {_shown(value)}")
    try:
        result = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {_shown(value)}") from None
    if not _INT64_MIN <= result <= _INT64_MAX:
        # The CLI's words for an option beyond 64 bits, from its own reader (ConfigError).
        _pgroups.require_int64(str(result), name)
    if minimum is not None and result < minimum:
        raise _pgroups.ConfigError(f"{name} {result} is invalid: it must be at least {minimum}")
    return result


def check_rank_map(name: str, value: Any) -> Optional[List[int]]:
    """A rank map as C++ takes it: None; a path (str or os.PathLike) of a JSON rank map file,
    read by the CLI's own reader (``--rank-map FILE``); or a sequence of ints (entry r is the
    launcher rank that runs mesh rank r). Whether it is a permutation that keeps each
    one-dimension kind's order is the C++ Layout's rule."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        return list(_pgroups.read_rank_map_file(os.fsencode(value)))
    if isinstance(value, (bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list of ints or the path of a JSON rank map file, not {_shown(value)}")
    return [check_int(f"{name}[{i}]", entry) for i, entry in enumerate(value)]


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a ``bool``: only True or False (numpy.bool_ too); TypeError otherwise."""
    if not _is_bool(value):
        raise TypeError(f"{name} must be a bool (True or False), not {_shown(value)}")
    return bool(value)


def check_timeout(name: str, value: Any) -> Optional[float]:
    """A timeout in seconds: an int or float (not a bool), or a ``datetime.timedelta``.
    Returns the seconds in effect (rounded up to whole milliseconds), or None for "no
    timeout" (0), by the C++ rule (pgroups/launch/timeout.hpp): negative, NaN or beyond
    ``_pgroups.largest_timeout_seconds`` is a ConfigError naming ``name``."""
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds or a datetime.timedelta, not {_shown(value)}")
    else:
        try:
            seconds = float(value)
        except OverflowError:  # an int beyond any float: beyond the cap, which C++ names
            seconds = float("inf")
    return _pgroups.timeout_seconds(seconds, name)


def timeout_seconds(timeout: Any) -> Optional[float]:
    """The timeout a collective call runs under, by the C++ resolution
    (pgroups/launch/timeout.hpp): ``timeout`` checked as check_timeout does, or for None
    ``PGROUPS_TIMEOUT``, then the default; None for no timeout."""
    if timeout is None:
        return _pgroups.resolved_timeout_seconds(None, "timeout")
    return check_timeout("timeout", timeout)


def carrying_timeout_seconds(timeout: Any) -> Optional[float]:
    """The timeout under which a rank carries its error into a call's agreement: the call's
    own when it is valid, else PGROUPS_TIMEOUT or the default (a bad timeout is the error
    being carried, or beside it); None for no timeout."""
    try:
        return timeout_seconds(timeout)
    except Exception:
        return timeout_seconds(None)


def check_token(name: str, value: Any) -> str:
    """One group token (a dimension name, a mode's value, or dimensions joined by '-' such as
    ``"tp-dp"``, which is one token): a non-empty ``str``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string token such as 'tp' or 'tp-dp', not {_shown(value)}")
    if not value:
        raise _pgroups.ConfigError(f"{name} '' is invalid: a token must not be empty")
    return value


def check_tokens(name: str, value: Any) -> List[str]:
    """A list of group tokens: a list or tuple of non-empty strings. A bare string is refused
    (``groups="tp"`` is a TypeError: write ``["tp"]``)."""
    if isinstance(value, str):
        raise TypeError(f"{name} must be a list of tokens, not the string {value!r}: write [{value!r}]")
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of string tokens, not {_shown(value)}")
    return [check_token(f"{name}[{i}]", item) for i, item in enumerate(value)]

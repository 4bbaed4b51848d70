"""Argument checks of the Python entry points: each names the argument, the value and the
rule (ConfigError), before any collective, so that a bad argument never reaches torch."""

from __future__ import annotations

import datetime
import numbers
from typing import Any, List, Optional

from . import _pgroups


def check_int(name: str, value: Any, *, minimum: Optional[int] = None, allow_none: bool = False) -> Optional[int]:
    """``value`` as an int (bool refused), at least ``minimum`` when given; None passes
    only with ``allow_none``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _pgroups.ConfigError(f"{name} must be an integer, not {value!r}")
    if minimum is not None and int(value) < minimum:
        raise _pgroups.ConfigError(f"{name} must be at least {minimum}, not {int(value)}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _pgroups.ConfigError(f"{name} must be True or False, not {value!r}")
    return value


def check_timeout(name: str, value: Any) -> Optional[float]:
    """None, a timedelta or a number of seconds, as seconds (None: no timeout given)."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise _pgroups.ConfigError(f"{name} must be None, a datetime.timedelta or seconds, not {value!r}")
    if seconds < 0:
        raise _pgroups.ConfigError(f"{name} must not be negative, not {seconds} s")
    return seconds


def check_token(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _pgroups.ConfigError(f"{name} must be a non-empty string, not {value!r}")
    return value


def check_tokens(name: str, value: Any) -> List[str]:
    """A string or an iterable of strings, as a list of strings."""
    if isinstance(value, str):
        return [check_token(name, value)]
    try:
        items = list(value)
    except TypeError:
        raise _pgroups.ConfigError(f"{name} must be a string or a list of strings, not {value!r}") from None
    return [check_token(name, item) for item in items]

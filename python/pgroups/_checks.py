"""One validation layer for every Python entry point: Python's own types, never coercion.

Each check raises TypeError naming the argument and the value (and pgroups.ConfigError
for a value of the right type that breaks a rule), and returns the value normalised.
"""

from __future__ import annotations

import datetime
import numbers
from typing import Any, List, Optional

from . import _pgroups

# The cap of the C++ timeout rule (docs/errors.md): larger values are refused, not wrapped.
_TIMEOUT_CAP_SECONDS = 365 * 24 * 3600.0


def check_int(name: str, value: Any, *, minimum: Optional[int] = None, allow_none: bool = False) -> Optional[int]:
    """An int (or numpy integer), never a bool, float or string."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise _pgroups.ConfigError(f"{name} = {value} is invalid: it must be at least {minimum}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """A bool (or numpy bool), never an int or string."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"{name} must be a bool, not {type(value).__name__} {value!r}")


def check_timeout(name: str, value: Any) -> Optional[float]:
    """Seconds (int, float or datetime.timedelta); None or 0 mean no timeout."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be seconds (int or float) or a datetime.timedelta, not "
                        f"{type(value).__name__} {value!r}")
    else:
        seconds = float(value)
    if not seconds == seconds or seconds < 0 or seconds > _TIMEOUT_CAP_SECONDS:
        raise _pgroups.ConfigError(f"{name} = {value!r} is invalid: a timeout is 0 (none) or a number of seconds "
                                   f"up to {_TIMEOUT_CAP_SECONDS:.0f}")
    return None if seconds == 0 else seconds


def check_tokens(name: str, value: Any) -> List[str]:
    """A list (any iterable but a bare string) of group tokens."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a list of group tokens, not the string {value!r} (write [{value!r}])")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name} must be a list of group tokens, not {type(value).__name__} {value!r}") from None
    return [check_token(f"{name}[{i}]", item) for i, item in enumerate(items)]


def check_token(name: str, value: Any) -> str:
    """One group token (a string)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string group token, not {type(value).__name__} {value!r}")
    return value

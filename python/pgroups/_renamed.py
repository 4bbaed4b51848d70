"""Keyword arguments and methods under their old names, accepted for one release.

The package once called a group kind ``mode`` (and a list of kinds ``modes``); the new
spelling is ``kind``/``kinds``. ``renamed_keywords`` maps an old keyword to its new
name, and ``renamed_method`` an old method name to the new method, each with a
DeprecationWarning naming the new spelling, so every function gets the same rule from one
place.
"""

import functools
import warnings
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# The renames every function taking a kind shares.
KIND_RENAMES = {"mode": "kind", "modes": "kinds"}


def renamed_keywords(**old_to_new: str) -> Callable[[F], F]:
    """Decorate a function so that ``old=`` reaches it as ``new=``, with a warning; both at
    once is a TypeError naming the two."""
    renames = old_to_new or KIND_RENAMES

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def renamed(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{function.__qualname__}() got both {new}= and its deprecated spelling {old}=")
                warnings.warn(f"{function.__qualname__}({old}=...) is deprecated: use {new}=",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return renamed  # type: ignore[return-value]

    return wrap


def renamed_method(old: str, method: F) -> F:
    """``method`` under its deprecated name ``old``: the same call, with a warning naming the new one."""

    @functools.wraps(method)
    def renamed(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"{old}() is deprecated: use {method.__name__}()", DeprecationWarning, stacklevel=2)
        return method(*args, **kwargs)

    return renamed  # type: ignore[return-value]

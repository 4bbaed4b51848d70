"""Colossal-AI's own colossalai/legacy/context files, unmodified, without the rest of
Colossal-AI: `colossalai` and `colossalai.legacy` are stub packages over the installed
folders, so only the modules the legacy context imports are loaded (Colossal-AI 0.5.0's
top-level package imports torch 2.5-era extensions and dozens of heavy packages)."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any, Optional


def stub() -> bool:
    """Puts the stub packages in place (nothing of Colossal-AI's imported yet); False when
    Colossal-AI is not installed."""
    if "colossalai.legacy" in sys.modules:
        return True
    try:
        spec = importlib.util.find_spec("colossalai")
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin is None:
        return False
    root = os.path.dirname(spec.origin)
    for name, folder in (("colossalai", root), ("colossalai.legacy", os.path.join(root, "legacy"))):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [folder]  # type: ignore[attr-defined]
            sys.modules[name] = package
    return True


def load() -> Optional[Any]:
    """colossalai.legacy.context, or None when Colossal-AI is not installed."""
    if "colossalai.legacy.context" in sys.modules:
        return sys.modules["colossalai.legacy.context"]
    if not stub():
        return None
    import colossalai.legacy.context as context

    return context

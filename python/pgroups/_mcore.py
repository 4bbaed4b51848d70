"""megatron-core's own ``parallel_state`` pointed at pgroups.megatron's groups.

megatron-core's layers (``ColumnParallelLinear``, ``RowParallelLinear``, the mappings,
``VocabParallelEmbedding``) and ``ProcessGroupCollection.use_mpu_process_groups()`` read
its module globals, not pgroups' getters: with those globals left unset, a layer built
without ``tp_group`` silently holds an unsharded weight. pgroups.megatron therefore sets
them to its own groups when megatron-core is importable, and clears them again in
``destroy_model_parallel()``. The names are those of megatron-core 0.16.1 (the version
pinned and tested, python/requirements/torch2-nodeps.txt); another version is accepted
when it has every one of them, and refused, naming the missing ones, when not.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from typing import Any, Callable, Dict, List, Optional

import torch.distributed as dist

from . import _pgroups

TESTED_VERSION = "0.16.1"

# megatron-core global -> the pgroups.megatron group it holds ("dense:tp": the dense plan's tp).
GROUPS = {
    "_TENSOR_MODEL_PARALLEL_GROUP": "dense:tp",
    "_PIPELINE_MODEL_PARALLEL_GROUP": "dense:pp",
    "_MODEL_PARALLEL_GROUP": "dense:tp-pp",
    "_EMBEDDING_GROUP": "dense:embd",
    "_POSITION_EMBEDDING_GROUP": "dense:pos_embd",
    "_DATA_PARALLEL_GROUP": "dense:dp",
    "_DATA_PARALLEL_GROUP_WITH_CP": "dense:dp-cp",
    # One distributed-optimizer instance (the only number pgroups builds): the partial
    # data-parallel group is the whole one, as megatron-core sets it then.
    "_INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP": "dense:dp-cp",
    "_CONTEXT_PARALLEL_GROUP": "dense:cp",
    "_TENSOR_AND_DATA_PARALLEL_GROUP": "dense:tp-dp",
    "_TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP": "dense:tp-dp-cp",
    "_TENSOR_AND_CONTEXT_PARALLEL_GROUP": "dense:tp-cp",
    "_EXPERT_MODEL_PARALLEL_GROUP": "expert:ep",
    "_EXPERT_TENSOR_PARALLEL_GROUP": "expert:tp",
    "_EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP": "expert:tp-ep",
    "_EXPERT_TENSOR_MODEL_PIPELINE_PARALLEL_GROUP": "expert:tp-ep-pp",
    "_EXPERT_DATA_PARALLEL_GROUP": "expert:dp",
    "_INTRA_PARTIAL_EXPERT_DATA_PARALLEL_GROUP": "expert:dp",
}
# The members' global ranks megatron-core keeps beside some groups (None off a partial kind).
RANKS = {
    "_TENSOR_MODEL_PARALLEL_GLOBAL_RANKS": "dense:tp",
    "_PIPELINE_GLOBAL_RANKS": "dense:pp",
    "_MODEL_PARALLEL_GLOBAL_RANKS": "dense:tp-pp",
    "_EMBEDDING_GLOBAL_RANKS": "dense:embd",
    "_POSITION_EMBEDDING_GLOBAL_RANKS": "dense:pos_embd",
    "_DATA_PARALLEL_GLOBAL_RANKS": "dense:dp",
    "_DATA_PARALLEL_GLOBAL_RANKS_WITH_CP": "dense:dp-cp",
    "_CONTEXT_PARALLEL_GLOBAL_RANKS": "dense:cp",
    "_EXPERT_MODEL_PARALLEL_RANKS": "expert:ep",
}
GLOO = {
    "_DATA_PARALLEL_GROUP_GLOO": "dense:dp",
    "_DATA_PARALLEL_GROUP_WITH_CP_GLOO": "dense:dp-cp",
    "_INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP_GLOO": "dense:dp-cp",
    "_EXPERT_DATA_PARALLEL_GROUP_GLOO": "expert:dp",
    "_INTRA_PARTIAL_EXPERT_DATA_PARALLEL_GROUP_GLOO": "expert:dp",
}
# Set from the state's other fields (see install), and cleared with the rest.
OTHERS = ("_INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP", "_VIRTUAL_PIPELINE_MODEL_PARALLEL_RANK",
          "_VIRTUAL_PIPELINE_MODEL_PARALLEL_WORLD_SIZE", "_global_process_group_list")
# megatron-core's on-the-fly overrides (set_tensor_model_parallel_world_size, ...): cleared by
# destroy, as megatron-core's own destroy_model_parallel clears them.
OVERRIDES = ("_MPU_TENSOR_MODEL_PARALLEL_WORLD_SIZE", "_MPU_PIPELINE_MODEL_PARALLEL_WORLD_SIZE",
             "_MPU_DATA_PARALLEL_WORLD_SIZE", "_MPU_DATA_PARALLEL_RANK", "_MPU_TENSOR_MODEL_PARALLEL_RANK",
             "_MPU_PIPELINE_MODEL_PARALLEL_RANK", "_MPU_EXPERT_MODEL_PARALLEL_WORLD_SIZE",
             "_MPU_EXPERT_MODEL_PARALLEL_RANK", "_MPU_EXPERT_TENSOR_PARALLEL_WORLD_SIZE",
             "_MPU_EXPERT_TENSOR_PARALLEL_RANK")
NAMES = tuple(GROUPS) + tuple(RANKS) + tuple(GLOO) + OTHERS + OVERRIDES


def parallel_state() -> Optional[Any]:
    """megatron-core's ``parallel_state`` module, or None where megatron-core is not
    installed (pgroups.megatron then stands alone). Installed but failing to import: a
    warning naming the failure, and None."""
    try:
        if importlib.util.find_spec("megatron.core") is None:
            return None
    except (ImportError, ValueError):  # no "megatron" package at all
        return None
    try:
        return importlib.import_module("megatron.core.parallel_state")
    except Exception as error:  # noqa: BLE001 - any import failure leaves pgroups' own getters alone
        warnings.warn(f"pgroups.megatron: megatron-core is installed but megatron.core.parallel_state does not "
                      f"import ({type(error).__name__}: {error}); its layers will not see pgroups' groups",
                      stacklevel=3)
        return None


def version(module: Any) -> str:
    try:
        return str(importlib.import_module("megatron.core.package_info").__version__)
    except Exception:  # noqa: BLE001 - a version is only reported
        return "unknown"


def check(module: Any) -> None:
    """Raises StateError where ``module`` cannot take pgroups' groups: a version without
    one of the globals, or megatron-core's own initialize_model_parallel already run."""
    missing = [name for name in NAMES if not hasattr(module, name)]
    if missing:
        raise _pgroups.StateError(
            f"megatron-core {version(module)}'s parallel_state has no {', '.join(missing)}: pgroups.megatron "
            f"sets megatron-core {TESTED_VERSION}'s parallel_state globals and cannot install its groups into this "
            f"version")
    if module._DATA_PARALLEL_GROUP is not None or module._TENSOR_MODEL_PARALLEL_GROUP \
            is not None:
        raise _pgroups.StateError(
            "megatron-core's parallel_state is already initialized (by megatron.core.parallel_state."
            "initialize_model_parallel?): call its destroy_model_parallel() before pgroups.megatron."
            "initialize_model_parallel")


def install(module: Any, groups: Dict[str, Any], ranks: Dict[str, List[int]], gloo: Dict[str, Any],
            created: List[Any], virtual_size: Optional[int], virtual_rank: Optional[int],
            destroy: Callable[[], None]) -> None:
    """Sets megatron-core's globals to pgroups.megatron's state (check() passed), and its
    ``destroy_model_parallel`` to ``destroy`` (pgroups.megatron's) until clear()."""
    for name, key in GROUPS.items():
        setattr(module, name, groups[key])
    for name, key in RANKS.items():
        setattr(module, name, list(ranks[key]) if ranks[key] else None)
    for name, key in GLOO.items():
        setattr(module, name, gloo.get(key))
    module._INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP = dist.GroupMember.WORLD
    module._VIRTUAL_PIPELINE_MODEL_PARALLEL_WORLD_SIZE = virtual_size
    module._VIRTUAL_PIPELINE_MODEL_PARALLEL_RANK = virtual_rank
    # update_pg_timeout walks this list; None stands for the default group there.
    module._global_process_group_list = [None] + list(created)
    setter = getattr(module, "_set_global_memory_buffer", None)
    if setter is not None:  # the sequence-parallel gathers of its layers use it
        setter()
    # megatron-core's own destroy_model_parallel destroys the gloo groups its globals hold:
    # here pgroups' groups, on a gloo default group its data-parallel groups themselves,
    # torch's default group at tp = pp = 1. Code calling it through the module (Megatron-LM's
    # scripts and tests do) gets pgroups.megatron's destroy instead while pgroups' groups
    # are installed.
    own = module.destroy_model_parallel
    if not hasattr(own, "__wrapped__"):
        def destroy_model_parallel() -> None:
            destroy()

        destroy_model_parallel.__wrapped__ = own  # type: ignore[attr-defined]
        destroy_model_parallel.__doc__ = ("pgroups.megatron.destroy_model_parallel while pgroups' groups are "
                                          "installed; megatron-core's own is __wrapped__.")
        module.destroy_model_parallel = destroy_model_parallel


def clear(module: Any) -> None:
    """megatron-core's globals back to unset and its own destroy_model_parallel back
    (nothing destroyed: pgroups.megatron destroys the groups it created)."""
    own = getattr(module.destroy_model_parallel, "__wrapped__", None)
    if own is not None:
        module.destroy_model_parallel = own
    for name in NAMES:
        setattr(module, name, None)
    for name in ("destroy_global_memory_buffer", "destroy_global_symmetric_memory_buffer"):
        destroy = getattr(module, name, None)
        if destroy is not None:
            destroy()

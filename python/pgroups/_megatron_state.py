"""The state and the rules of pgroups.megatron apart from its public functions: the kinds
Megatron-LM creates, the arguments taken with their default only, the plan of one of its
meshes (as megatron-core's ``RankGenerator`` orders it), the check step of
initialize_model_parallel (``checked_request``: its arguments into a ``Request``), and
what a rank holds once its groups exist."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Dict, List, Optional, Tuple

import torch.distributed as dist

from . import _mcore, _pgroups
from ._checks import check_bool, check_int, check_token
from ._plan import Mesh, Plan

# The dense kinds Megatron-LM creates, in its order, and the expert ones.
DENSE_KINDS = ("dp-cp", "dp", "cp", "tp-pp", "tp", "pp", "embd", "pos_embd", "tp-dp-cp", "tp-dp", "tp-cp")
EXPERT_KINDS = ("ep", "tp", "tp-ep", "tp-ep-pp", "dp")

# torch names a group made with use_local_synchronization (and split_group) after its
# ranks and this rank's number of live groups, which differ between ranks once some were
# outside a partial kind (the embedding groups) or the program made groups of its own:
# members would then wait under different names forever. new_group, as megatron-core
# uses, names groups by a count every rank keeps alike.
CREATION_METHOD = "new_group"

# Arguments accepted with their default only (Megatron-LM's meaning needs NCCL options,
# custom rank functions or groups pgroups does not build).
DEFAULT_ONLY: Dict[str, Any] = {
    "pipeline_model_parallel_comm_backend": None,
    "use_sharp": False,
    "hierarchical_context_parallel_sizes": None,
    "hybrid_context_parallel": False,
    "num_distributed_optimizer_instances": 1,
    "nccl_communicator_config_path": None,
    "get_embedding_ranks": None,
    "get_position_embedding_ranks": None,
    "high_priority_stream_groups": None,
    "sharp_enabled_group": None,
    "create_all_gather_group": False,
}


class State:
    def __init__(self) -> None:
        self.groups: Dict[str, Any] = {}  # "dense:tp", "expert:dp", ... -> torch group (None: not a member)
        self.ranks: Dict[str, List[int]] = {}
        self.gloo: Dict[str, Any] = {}
        self.overrides: Dict[str, Optional[int]] = {}
        self.virtual_size: Optional[int] = None
        self.virtual_rank: Optional[int] = None
        self.created: List[Any] = []  # every distinct torch group, for the summary
        # The creations themselves: destroy goes through them, so that a group pgroups did not
        # create (torch's default group, a whole-world kind's) is never destroyed.
        self.made: List[Any] = []
        self.creations = 0
        self.seconds = 0.0
        self.plans: Dict[str, Plan] = {}
        self.views: Dict[str, Any] = {}  # "dense", "expert" -> the plan's view of this rank
        self.mcore: Any = None  # megatron-core's parallel_state, when its globals hold these groups




def mesh_plan(order: str, sizes: Dict[str, int], kinds: Tuple[str, ...], rank_map: Any = None) -> Plan:
    dims = order.split("-")
    for name in ("tp", "cp", "ep", "dp", "pp"):
        if name not in dims:
            if sizes.get(name, 1) != 1:
                raise _pgroups.ConfigError(
                    f"order '{order}' has no '{name}', but its size is {sizes[name]}: every dimension above 1 "
                    f"must be in the order")
            dims.append(name)  # as Megatron-LM's RankGenerator appends it
    mesh = Mesh.from_order("-".join(dims), **{name: sizes.get(name, 1) for name in dims})
    return Plan(mesh=mesh, groups=list(kinds), rank_map=rank_map)


@dataclasses.dataclass
class Request:
    """initialize_model_parallel's arguments once checked: the two plans and what decides
    the creations after the first."""
    order: str
    virtual_size: Optional[int]
    timeout: datetime.timedelta
    gloo: bool
    dense_plan: Any
    expert_plan: Any
    mcore: Any


def checked_request(given: Dict[str, Any], tensor_model_parallel_size: Any, pipeline_model_parallel_size: Any,
                    virtual_pipeline_model_parallel_size: Any, context_parallel_size: Any,
                    expert_model_parallel_size: Any, expert_tensor_parallel_size: Any,
                    distributed_timeout_minutes: Any, create_gloo_process_groups: Any, order: Any,
                    rank_map: Any, already_initialized: bool) -> Request:
    """initialize_model_parallel's check step: every argument against Megatron's rules, on
    this rank alone; raises what the rank then carries into the first agreement."""
    for name, default in DEFAULT_ONLY.items():
        # By type and value: use_sharp=0 is not False, None is not a bool's default.
        if type(given[name]) is not type(default) or given[name] != default:
            raise _pgroups.ConfigError(
                f"pgroups.megatron.initialize_model_parallel does not implement {name}={given[name]!r}; only its "
                f"default {default!r} is accepted (use megatron.core.parallel_state for it)")
    tp = check_int("tensor_model_parallel_size", tensor_model_parallel_size, minimum=1)
    pp = check_int("pipeline_model_parallel_size", pipeline_model_parallel_size, minimum=1)
    vpp = check_int("virtual_pipeline_model_parallel_size", virtual_pipeline_model_parallel_size, minimum=1,
                    allow_none=True)
    cp = check_int("context_parallel_size", context_parallel_size, minimum=1)
    ep = check_int("expert_model_parallel_size", expert_model_parallel_size, minimum=1)
    etp = check_int("expert_tensor_parallel_size", expert_tensor_parallel_size, minimum=1, allow_none=True)
    minutes = check_int("distributed_timeout_minutes", distributed_timeout_minutes, minimum=1)
    gloo = check_bool("create_gloo_process_groups", create_gloo_process_groups)
    order = check_token("order", order).lower()
    if tp is None or pp is None or cp is None or ep is None or minutes is None:  # not reached: no allow_none
        raise _pgroups.StateError("pgroups.megatron: a size check let None through")
    world = dist.get_world_size()
    model = tp * pp * cp
    if world % model:
        raise _pgroups.ConfigError(
            f"world size {world} is not divisible by tensor_model_parallel_size {tp} * "
            f"pipeline_model_parallel_size {pp} * context_parallel_size {cp} = {model}")
    if vpp is not None and pp == 1:
        raise _pgroups.ConfigError(
            f"virtual_pipeline_model_parallel_size {vpp} needs pipeline_model_parallel_size above 1, not {pp}")
    etp = tp if etp is None else etp
    expert = etp * ep * pp
    if world % expert:
        raise _pgroups.ConfigError(
            f"world size {world} is not divisible by expert_tensor_parallel_size {etp} * "
            f"expert_model_parallel_size {ep} * pipeline_model_parallel_size {pp} = {expert}")
    if already_initialized:
        raise _pgroups.StateError("pgroups.megatron: model parallel groups are already initialized; call "
                                  "destroy_model_parallel() first")
    dense_plan = mesh_plan(order, dict(tp=tp, cp=cp, ep=1, dp=world // model, pp=pp), DENSE_KINDS, rank_map)
    expert_plan = mesh_plan(order, dict(tp=etp, cp=1, ep=ep, dp=world // expert, pp=pp), EXPERT_KINDS, rank_map)
    if not order.endswith("pp") and pp > 1 and world // expert != world // model:
        raise _pgroups.ConfigError(
            f"order '{order}' does not end with pp, so the expert data parallel size {world // expert} must equal "
            f"the data parallel size {world // model}")
    mcore = _mcore.parallel_state()
    if mcore is not None:
        _mcore.check(mcore)
    return Request(order, vpp, datetime.timedelta(minutes=minutes), bool(gloo), dense_plan, expert_plan, mcore)

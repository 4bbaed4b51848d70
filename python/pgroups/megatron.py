"""Megatron-LM's ``parallel_state`` on pgroups' groups.

``from pgroups import megatron as mpu`` instead of ``from megatron.core import
parallel_state as mpu``: :func:`initialize_model_parallel` takes megatron-core's arguments
(pinned: megatron-core 0.16.1) with their names and defaults, and the getters have its
names and meanings (``get_tensor_model_parallel_group()``, ``get_data_parallel_rank(
with_context_parallel=True)``, ``is_pipeline_first_stage()``, the expert groups, ...).

The groups are those of megatron-core's ``RankGenerator`` for ``order``, computed by
pgroups' mesh (``pgroups.Plan(mesh=..., groups=[...])``: one dense mesh tp, cp, ep=1, dp,
pp and one expert mesh expert-tp, ep, expert-dp, pp), validated and agreed by every rank
before the first group (:func:`pgroups.torch.create_groups`; the first agreement also holds
the order, the expert mesh, the virtual pipeline and whether gloo copies are made, which
decide the creations after it), and each distinct group is
created once: a kind whose groups equal an earlier kind's (the expert pp groups are the
pp groups; expert-tp is tp when the sizes agree; dp-cp is dp without context
parallelism...) shares its torch group. docs/using/megatron.md lists each function's
megatron-core counterpart and the deliberate differences.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch.distributed as dist

from . import _mcore, _pgroups
from . import _torch_create as creation
from ._checks import check_bool, check_int
from ._megatron_state import CREATION_METHOD, DENSE_KINDS, EXPERT_KINDS, Request, State, checked_request

_state = State()


def initialize_model_parallel(
    tensor_model_parallel_size: int = 1,
    pipeline_model_parallel_size: int = 1,
    virtual_pipeline_model_parallel_size: Optional[int] = None,
    pipeline_model_parallel_comm_backend: Optional[str] = None,
    use_sharp: bool = False,
    context_parallel_size: int = 1,
    hierarchical_context_parallel_sizes: Optional[List[int]] = None,
    hybrid_context_parallel: bool = False,
    expert_model_parallel_size: int = 1,
    num_distributed_optimizer_instances: int = 1,
    expert_tensor_parallel_size: Optional[int] = None,
    nccl_communicator_config_path: Optional[str] = None,
    distributed_timeout_minutes: int = 30,
    order: str = "tp-cp-ep-dp-pp",
    get_embedding_ranks: Optional[Callable[[List[int], Optional[int]], List[int]]] = None,
    get_position_embedding_ranks: Optional[Callable[[List[int], Optional[int]], List[int]]] = None,
    create_gloo_process_groups: bool = True,
    high_priority_stream_groups: Optional[List[str]] = None,
    sharp_enabled_group: Optional[str] = None,
    create_all_gather_group: Optional[bool] = False,
    rank_map: Any = None,
) -> None:
    """megatron-core's initialize_model_parallel: every group of its parallel_state, for
    the same arguments. Collective over the default group. Raises ConfigError naming the
    argument for one that pgroups accepts only with its default, for a size that is not a
    positive integer or does not divide the world; MismatchError when ranks disagree; all
    on every rank and before the first group. ``rank_map`` (pgroups' own, not Megatron-LM's)
    runs mesh rank r on torch rank ``rank_map[r]`` in the dense and expert meshes alike."""
    if not dist.is_initialized():
        raise _pgroups.StateError("pgroups.megatron.initialize_model_parallel needs torch.distributed "
                                  "init_process_group first")
    given = dict(pipeline_model_parallel_comm_backend=pipeline_model_parallel_comm_backend, use_sharp=use_sharp,
                 hierarchical_context_parallel_sizes=hierarchical_context_parallel_sizes,
                 hybrid_context_parallel=hybrid_context_parallel,
                 num_distributed_optimizer_instances=num_distributed_optimizer_instances,
                 nccl_communicator_config_path=nccl_communicator_config_path,
                 get_embedding_ranks=get_embedding_ranks, get_position_embedding_ranks=get_position_embedding_ranks,
                 high_priority_stream_groups=high_priority_stream_groups, sharp_enabled_group=sharp_enabled_group,
                 create_all_gather_group=create_all_gather_group)
    # Every check runs before the first agreement and its failure is carried into it
    # (pgroups.torch.reject), so that one rank's rejection reaches every rank at once.
    try:
        request = checked_request(given, tensor_model_parallel_size, pipeline_model_parallel_size,
                                  virtual_pipeline_model_parallel_size, context_parallel_size,
                                  expert_model_parallel_size, expert_tensor_parallel_size, distributed_timeout_minutes,
                                  create_gloo_process_groups, order, rank_map, model_parallel_is_initialized())
    except Exception as error:  # every class a check raises is carried, as it is
        creation.reject(error, None)
    state = _create(request)
    if request.gloo:
        _create_gloo_copies(state, request)
    _install(state, request)


def _create(request: Request) -> State:
    """The plan and create steps: one creation per distinct group of the two plans. A kind
    whose partition equals an earlier kind's, in either plan, takes that kind's group. The
    C++ partition key decides (equal keys: the same groups, whichever plan made them), the
    same on every rank; every per-rank answer comes from each plan's view of this rank."""
    rank = dist.get_rank()
    state = State()
    state.plans = {"dense": request.dense_plan, "expert": request.expert_plan}
    start = time.perf_counter()
    seen: Dict[Any, Tuple[str, str]] = {}
    # Everything that decides which collective creations follow is agreed by the first
    # one, so that a rank asked for other gloo copies, another order or expert mesh, or
    # another virtual pipeline meets a MismatchError with the others there instead of
    # leaving them waiting in a creation it skips. The later creations agree again only on
    # what they carry (their own plan and kinds, an error a rank hit since).
    door: Tuple[Tuple[str, str], ...] = (
        ("door", "megatron.initialize_model_parallel"), ("order", request.order),
        ("expert", request.expert_plan.describe()), ("virtual_pipeline", str(request.virtual_size)),
        ("gloo_copies", "1" if request.gloo else "0"))
    for prefix, plan, kinds in (("dense", request.dense_plan, DENSE_KINDS),
                                ("expert", request.expert_plan, EXPERT_KINDS)):
        view = plan.view(rank)
        state.views[prefix] = view
        new_kinds = []
        for kind in kinds:
            key = view.partition_key(kind)
            if key in seen:
                continue
            seen[key] = (prefix, kind)
            new_kinds.append(kind)
        made = creation.create_groups(plan, kinds=new_kinds, timeout=request.timeout, method=CREATION_METHOD,
                                      door=door)
        door = ()
        state.made.append(made)
        state.creations += made.calls
        for kind in new_kinds:
            group = made.get_group(kind) if view.is_member(kind) else None
            state.groups[f"{prefix}:{kind}"] = group
            if group is not None:
                state.created.append(group)
        for kind in kinds:
            owner = "%s:%s" % seen[view.partition_key(kind)]
            state.groups[f"{prefix}:{kind}"] = state.groups[owner]
            state.ranks[f"{prefix}:{kind}"] = view.members(kind) if view.is_member(kind) else []
    state.seconds = time.perf_counter() - start
    return state


def _create_gloo_copies(state: State, request: Request) -> None:
    """Megatron-LM's gloo groups of dp, dp-cp and expert dp: the same groups on gloo (the
    groups themselves where the default group is gloo)."""
    start = time.perf_counter()
    backend = creation.default_backend()
    if backend == "gloo":
        for name in ("dense:dp", "dense:dp-cp", "expert:dp"):
            state.gloo[name] = state.groups[name]
        return
    made = creation.create_groups(request.dense_plan, kinds=["dp", "dp-cp"], backend="gloo", timeout=request.timeout,
                                  method=CREATION_METHOD)
    made_expert = creation.create_groups(request.expert_plan, kinds=["dp"], backend="gloo", timeout=request.timeout,
                                         method=CREATION_METHOD)
    state.gloo = {"dense:dp": made.get_group("dp"), "dense:dp-cp": made.get_group("dp-cp"),
                  "expert:dp": made_expert.get_group("dp")}
    state.made += [made, made_expert]
    state.created += list(state.gloo.values())
    state.creations += made.calls + made_expert.calls
    state.seconds += time.perf_counter() - start


def _install(state: State, request: Request) -> None:
    """The install step: the virtual pipeline, megatron-core's own parallel_state where it is
    imported (its getters then answer with these groups), and this module's state."""
    if request.virtual_size is not None:
        state.virtual_size, state.virtual_rank = request.virtual_size, 0
    if request.mcore is not None:
        _mcore.install(request.mcore, state.groups, state.ranks, state.gloo, state.created, state.virtual_size,
                       state.virtual_rank, destroy_model_parallel)
        state.mcore = request.mcore
    global _state
    _state = state


def creation_summary() -> Dict[str, Any]:
    """How the groups were made: torch group creations this rank took part in and the
    seconds it spent (pgroups' own; Megatron-LM has no such function)."""
    return {"creations": _state.creations, "distinct_groups": len(_state.created), "seconds": _state.seconds}


def _group(key: str, what: str, check_initialized: bool = True) -> Any:
    check_initialized = check_bool("check_initialized", check_initialized)
    if key not in _state.groups:
        if check_initialized:
            raise _pgroups.StateError(f"{what} group is not initialized: call "
                                      f"pgroups.megatron.initialize_model_parallel first")
        return None
    group = _state.groups[key]
    if group is None and check_initialized:
        # A rank outside every group of a partial kind (embedding), as megatron-core says.
        raise _pgroups.StateError(f"{what} group is not initialized on rank {dist.get_rank()}: this rank is in no "
                                  f"{what} group")
    return group


def _ranks(key: str, what: str) -> List[int]:
    if key not in _state.ranks:
        raise _pgroups.StateError(f"{what} group is not initialized: call pgroups.megatron.initialize_model_parallel "
                                  f"first")
    return _state.ranks[key]


def _size(key: str, what: str, override: Optional[str] = None) -> int:
    if override and _state.overrides.get(override) is not None:
        return int(_state.overrides[override])  # type: ignore[arg-type]
    if not dist.is_initialized():
        return 0
    return len(_ranks(key, what))


def _rank(key: str, what: str, override: Optional[str] = None) -> int:
    if override and _state.overrides.get(override) is not None:
        return int(_state.overrides[override])  # type: ignore[arg-type]
    if not dist.is_initialized():
        return 0
    return _ranks(key, what).index(dist.get_rank())


# State ----------------------------------------------------------------------------------
def is_initialized() -> bool:
    """Whether pgroups.megatron's groups exist (megatron-core: whether the data parallel
    group does)."""
    return "dense:dp" in _state.groups


def is_unitialized() -> bool:
    """megatron-core's (misspelt) deprecated inverse of is_initialized."""
    return not is_initialized()


def model_parallel_is_initialized() -> bool:
    return all(k in _state.groups for k in ("dense:tp", "dense:pp", "dense:dp"))


def destroy_model_parallel() -> None:
    """Destroys every group pgroups.megatron created (each distinct group once) and forgets
    them; never torch's default group (with tp = pp = 1 the data parallel group is it), so
    initialize_model_parallel works again after it."""
    global _state
    if _state.mcore is not None:
        _mcore.clear(_state.mcore)
    for made in _state.made:
        made.destroy()
    _state = State()


# Groups ---------------------------------------------------------------------------------
def get_model_parallel_group(check_initialized: bool = True) -> Any:
    return _group("dense:tp-pp", "model parallel", check_initialized)


def get_tensor_model_parallel_group(check_initialized: bool = True) -> Any:
    return _group("dense:tp", "tensor model parallel", check_initialized)


def get_pipeline_model_parallel_group(check_initialized: bool = True) -> Any:
    return _group("dense:pp", "pipeline model parallel", check_initialized)


def _data_key(with_context_parallel: Any, partial_data_parallel: Any = False) -> str:
    """The data-parallel kind asked for, its flags checked as bools (one distributed-optimizer
    instance only: the partial group is the whole one)."""
    check_bool("partial_data_parallel", partial_data_parallel)
    return "dense:dp-cp" if check_bool("with_context_parallel", with_context_parallel) else "dense:dp"


def get_data_parallel_group(with_context_parallel: bool = False, partial_data_parallel: bool = False) -> Any:
    return _group(_data_key(with_context_parallel, partial_data_parallel), "data parallel")


def get_data_parallel_group_gloo(with_context_parallel: bool = False, partial_data_parallel: bool = False) -> Any:
    key = _data_key(with_context_parallel, partial_data_parallel)
    if key not in _state.gloo:
        raise _pgroups.StateError("data parallel gloo group is not initialized (create_gloo_process_groups=False?)")
    return _state.gloo[key]


def get_context_parallel_group(check_initialized: bool = True) -> Any:
    return _group("dense:cp", "context parallel", check_initialized)


def get_context_parallel_global_ranks(check_initialized: bool = True) -> Optional[List[int]]:
    if "dense:cp" not in _state.ranks and not check_initialized:
        return None
    return _ranks("dense:cp", "context parallel")


def get_embedding_group(check_initialized: bool = True) -> Any:
    return _group("dense:embd", "embedding", check_initialized)


def get_position_embedding_group(check_initialized: bool = True) -> Any:
    return _group("dense:pos_embd", "position embedding", check_initialized)


def get_amax_reduction_group(with_context_parallel: bool = False, tp_only_amax_red: bool = False) -> Any:
    with_context_parallel = check_bool("with_context_parallel", with_context_parallel)
    if check_bool("tp_only_amax_red", tp_only_amax_red):
        return get_tensor_and_context_parallel_group() if with_context_parallel else get_tensor_model_parallel_group()
    return get_tensor_and_data_parallel_group(with_context_parallel=with_context_parallel)


def get_tensor_and_data_parallel_group(check_initialized: bool = True, with_context_parallel: bool = False) -> Any:
    return _group("dense:tp-dp-cp" if check_bool("with_context_parallel", with_context_parallel) else "dense:tp-dp",
                  "tensor and data parallel",
                  check_initialized)


def get_tensor_and_context_parallel_group(check_initialized: bool = True) -> Any:
    return _group("dense:tp-cp", "tensor and context parallel", check_initialized)


def get_intra_distributed_optimizer_instance_group(check_initialized: bool = True) -> Any:
    """With one distributed-optimizer instance (the only number pgroups builds), the
    instance is the whole world, as in megatron-core."""
    if not is_initialized() and check_initialized:
        raise _pgroups.StateError("intra distributed optimizer instance group is not initialized")
    return dist.GroupMember.WORLD


# World sizes and ranks ------------------------------------------------------------------
def _setter(key: str, name: str) -> Callable[[Optional[int]], None]:
    """megatron-core's set_* override: the getter answers the value set (None: the group's),
    megatron-core's own getter too while its globals hold pgroups' groups."""

    def set_value(value: Optional[int]) -> None:
        # Named as megatron-core names the setter's one argument.
        _state.overrides[key] = check_int("world_size" if key.endswith("_size") else "rank", value, allow_none=True)
        if _state.mcore is not None:
            getattr(_state.mcore, name)(value)

    set_value.__name__ = set_value.__qualname__ = name
    return set_value


set_tensor_model_parallel_world_size = _setter("tp_size", "set_tensor_model_parallel_world_size")
set_pipeline_model_parallel_world_size = _setter("pp_size", "set_pipeline_model_parallel_world_size")
set_tensor_model_parallel_rank = _setter("tp_rank", "set_tensor_model_parallel_rank")
set_pipeline_model_parallel_rank = _setter("pp_rank", "set_pipeline_model_parallel_rank")
set_data_parallel_rank = _setter("dp_rank", "set_data_parallel_rank")
set_expert_model_parallel_world_size = _setter("ep_size", "set_expert_model_parallel_world_size")
set_expert_model_parallel_rank = _setter("ep_rank", "set_expert_model_parallel_rank")
set_expert_tensor_parallel_world_size = _setter("etp_size", "set_expert_tensor_parallel_world_size")
set_expert_tensor_parallel_rank = _setter("etp_rank", "set_expert_tensor_parallel_rank")


def set_virtual_pipeline_model_parallel_world_size(world_size: Optional[int]) -> None:
    _state.virtual_size = check_int("world_size", world_size, allow_none=True)
    if _state.mcore is not None:
        _state.mcore.set_virtual_pipeline_model_parallel_world_size(world_size)


def set_virtual_pipeline_model_parallel_rank(rank: Optional[int]) -> None:
    _state.virtual_rank = check_int("rank", rank, allow_none=True)
    if _state.mcore is not None:
        _state.mcore.set_virtual_pipeline_model_parallel_rank(rank)


def get_tensor_model_parallel_world_size() -> int:
    return _size("dense:tp", "tensor model parallel", "tp_size")


def get_pipeline_model_parallel_world_size() -> int:
    return _size("dense:pp", "pipeline model parallel", "pp_size")


def get_tensor_model_parallel_rank() -> int:
    return _rank("dense:tp", "tensor model parallel", "tp_rank")


def get_pipeline_model_parallel_rank() -> int:
    return _rank("dense:pp", "pipeline model parallel", "pp_rank")


def get_virtual_pipeline_model_parallel_rank() -> Optional[int]:
    return _state.virtual_rank


def get_virtual_pipeline_model_parallel_world_size() -> Optional[int]:
    return _state.virtual_size


def is_pipeline_first_stage(ignore_virtual: bool = True, vp_stage: Optional[int] = None) -> bool:
    ignore_virtual = check_bool("ignore_virtual", ignore_virtual)
    vp_stage = check_int("vp_stage", vp_stage, minimum=0, allow_none=True)
    if not ignore_virtual and _state.virtual_size is not None:
        if vp_stage is None:
            raise _pgroups.ConfigError("vp_stage must be passed if virtual pipeline is enabled")
        if vp_stage != 0:
            return False
    return get_pipeline_model_parallel_rank() == 0


def is_pipeline_last_stage(ignore_virtual: bool = True, vp_stage: Optional[int] = None) -> bool:
    ignore_virtual = check_bool("ignore_virtual", ignore_virtual)
    vp_stage = check_int("vp_stage", vp_stage, minimum=0, allow_none=True)
    if not ignore_virtual and _state.virtual_size is not None:
        if vp_stage is None:
            raise _pgroups.ConfigError("vp_stage must be passed if virtual pipeline is enabled")
        if vp_stage != _state.virtual_size - 1:
            return False
    return get_pipeline_model_parallel_rank() == get_pipeline_model_parallel_world_size() - 1


def is_rank_in_embedding_group(ignore_virtual: bool = True, vp_stage: Optional[int] = None) -> bool:
    ignore_virtual = check_bool("ignore_virtual", ignore_virtual)
    vp_stage = check_int("vp_stage", vp_stage, minimum=0, allow_none=True)
    ranks = _state.ranks.get("dense:embd")
    rank = dist.get_rank()
    if not ranks or rank not in ranks:
        return False
    if ignore_virtual:
        return True
    if rank == ranks[0]:
        return is_pipeline_first_stage(ignore_virtual=False, vp_stage=vp_stage)
    if rank == ranks[-1]:
        return is_pipeline_last_stage(ignore_virtual=False, vp_stage=vp_stage)
    return True


def is_rank_in_position_embedding_group() -> bool:
    ranks = _state.ranks.get("dense:pos_embd")
    return bool(ranks) and dist.get_rank() in ranks  # type: ignore[operator]


def get_tensor_model_parallel_src_rank() -> int:
    return _ranks("dense:tp", "tensor model parallel")[0]


def get_model_parallel_src_rank() -> int:
    return _ranks("dense:tp-pp", "model parallel")[0]


def get_data_parallel_src_rank(with_context_parallel: bool = False) -> int:
    return _ranks(_data_key(with_context_parallel), "data parallel")[0]


def get_pipeline_model_parallel_first_rank() -> int:
    return _ranks("dense:pp", "pipeline model parallel")[0]


def get_pipeline_model_parallel_last_rank() -> int:
    return _ranks("dense:pp", "pipeline model parallel")[get_pipeline_model_parallel_world_size() - 1]


def get_pipeline_model_parallel_next_rank() -> int:
    ranks = _ranks("dense:pp", "pipeline model parallel")
    return ranks[(get_pipeline_model_parallel_rank() + 1) % get_pipeline_model_parallel_world_size()]


def get_pipeline_model_parallel_prev_rank() -> int:
    ranks = _ranks("dense:pp", "pipeline model parallel")
    return ranks[(get_pipeline_model_parallel_rank() - 1) % get_pipeline_model_parallel_world_size()]


def get_data_parallel_world_size(with_context_parallel: bool = False, partial_data_parallel: bool = False) -> int:
    return _size(_data_key(with_context_parallel, partial_data_parallel), "data parallel")


def get_data_parallel_rank(with_context_parallel: bool = False, partial_data_parallel: bool = False) -> int:
    return _rank(_data_key(with_context_parallel, partial_data_parallel), "data parallel", "dp_rank")


def get_context_parallel_world_size() -> int:
    return _size("dense:cp", "context parallel")


def get_context_parallel_rank() -> int:
    return _rank("dense:cp", "context parallel")


def get_tensor_and_context_parallel_world_size() -> int:
    return _size("dense:tp-cp", "tensor and context parallel")


def get_tensor_and_context_parallel_rank() -> int:
    return _rank("dense:tp-cp", "tensor and context parallel")


# Expert groups --------------------------------------------------------------------------
def get_expert_model_parallel_group(check_initialized: bool = True) -> Any:
    return _group("expert:ep", "expert model parallel", check_initialized)


def get_expert_model_parallel_src_rank() -> int:
    return _ranks("expert:ep", "expert model parallel")[0]


def get_expert_model_parallel_world_size() -> int:
    return _size("expert:ep", "expert model parallel", "ep_size")


def get_expert_model_parallel_rank() -> int:
    return _rank("expert:ep", "expert model parallel", "ep_rank")


def get_expert_tensor_parallel_group(check_initialized: bool = True) -> Any:
    return _group("expert:tp", "expert tensor parallel", check_initialized)


def get_expert_tensor_parallel_world_size() -> int:
    return _size("expert:tp", "expert tensor parallel", "etp_size")


def get_expert_tensor_parallel_rank() -> int:
    return _rank("expert:tp", "expert tensor parallel", "etp_rank")


def get_expert_tensor_and_model_parallel_group(check_initialized: bool = True) -> Any:
    return _group("expert:tp-ep", "expert tensor and model parallel", check_initialized)


def get_expert_tensor_and_model_parallel_world_size() -> int:
    return _size("expert:tp-ep", "expert tensor and model parallel")


def get_expert_tensor_and_model_parallel_rank() -> int:
    return _rank("expert:tp-ep", "expert tensor and model parallel")


def get_expert_tensor_model_pipeline_parallel_group(check_initialized: bool = True) -> Any:
    return _group("expert:tp-ep-pp", "expert tensor, model and pipeline parallel", check_initialized)


def get_expert_data_parallel_group(check_initialized: bool = True, partial_expert_data_parallel: bool = False) -> Any:
    check_bool("partial_expert_data_parallel", partial_expert_data_parallel)
    return _group("expert:dp", "expert data parallel", check_initialized)


def get_data_modulo_expert_parallel_group(partial_expert_data_parallel: bool = False) -> Any:
    """Deprecated in megatron-core for get_expert_data_parallel_group."""
    return get_expert_data_parallel_group(partial_expert_data_parallel=partial_expert_data_parallel)


def get_expert_data_parallel_group_gloo(partial_expert_data_parallel: bool = False) -> Any:
    check_bool("partial_expert_data_parallel", partial_expert_data_parallel)
    if "expert:dp" not in _state.gloo:
        raise _pgroups.StateError("expert data parallel gloo group is not initialized")
    return _state.gloo["expert:dp"]


def get_expert_data_parallel_rank(partial_expert_data_parallel: bool = False) -> int:
    check_bool("partial_expert_data_parallel", partial_expert_data_parallel)
    return _rank("expert:dp", "expert data parallel")


def get_expert_data_parallel_world_size(partial_expert_data_parallel: bool = False) -> int:
    check_bool("partial_expert_data_parallel", partial_expert_data_parallel)
    return _size("expert:dp", "expert data parallel")


def get_all_ranks() -> str:
    """This rank's coordinates, as megatron-core's: "tp_rank,pp_rank,dp_rank,... " joined by
    commas in its order (tp, pp, dp, cp, ep, etp)."""
    ranks = [get_tensor_model_parallel_rank(), get_pipeline_model_parallel_rank(), get_data_parallel_rank(),
             get_context_parallel_rank(), get_expert_model_parallel_rank(), get_expert_tensor_parallel_rank()]
    return "_".join(str(r or 0) for r in ranks)


def get_process_group_collection() -> Any:
    """megatron-core's ProcessGroupCollection (megatron.core.process_groups_config) with
    pgroups' groups; ImportError saying so without megatron-core."""
    try:
        from megatron.core.process_groups_config import ProcessGroupCollection
    except ImportError as error:
        raise ImportError(f"get_process_group_collection() needs megatron-core, which cannot be imported ({error}); "
                          f"pgroups is tested with megatron-core==0.16.1") from error
    collection = ProcessGroupCollection()
    fields = {"tp": "dense:tp", "pp": "dense:pp", "mp": "dense:tp-pp", "embd": "dense:embd",
              "pos_embd": "dense:pos_embd", "cp": "dense:cp", "tp_cp": "dense:tp-cp", "ep": "expert:ep",
              "expt_tp": "expert:tp", "tp_ep": "expert:tp-ep", "tp_ep_pp": "expert:tp-ep-pp",
              "tp_dp_cp": "dense:tp-dp-cp", "dp": "dense:dp", "dp_cp": "dense:dp-cp", "expt_dp": "expert:dp",
              "intra_dp_cp": "dense:dp-cp", "intra_expt_dp": "expert:dp"}
    for field, key in fields.items():
        setattr(collection, field, _group(key, field, check_initialized=False))
    return collection

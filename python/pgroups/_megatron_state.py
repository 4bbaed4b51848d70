"""The state and the rules of pgroups.megatron apart from its public functions: the kinds
Megatron-LM creates, the arguments taken with their default only, the plan of one of its
meshes (as megatron-core's ``RankGenerator`` orders it), and what a rank holds once its
groups exist."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import _pgroups
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

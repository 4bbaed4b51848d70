"""Plan and Mesh: the pure layout (no MPI), computed by the C++ library."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _pgroups
from ._checks import check_bool, check_int, check_rank_map, check_token, check_tokens
from ._modes import KindLike, ParallelMode, mode_value
from ._recovery import Recovery
from ._renamed import renamed_keywords, renamed_method

DimsLike = Union[str, Sequence[str]]


class Plan:
    """The validated process-group layout of one configuration (SPEC sections 1-3).

    ``Plan(world_size, pipeline=1, tensor=1, mode=None, depth=None,
    legacy_sequence_dp=False, seed=1024)`` validates the whole configuration at once and
    raises :class:`pgroups.ConfigError` with the C++ message (e.g. ``"tensor size 8 is not
    a perfect square, required by mode 2d"``) when it breaks a rule. ``mode`` is one of
    None, ``"1d"``, ``"2d"``, ``"2.5d"``, ``"3d"``, ``"sequence"``; ``depth`` is required
    with ``"2.5d"`` and forbidden otherwise. The data-parallel size is derived:
    ``world_size / (pipeline * tensor)``.

    Nothing is enumerated until asked: ``group_of``, ``local_rank`` and ``coordinates``
    cost O(group size) or less; ``groups`` is O(world size), ``to_json`` O(world size x kinds).

    >>> plan = Plan(8, pipeline=2, tensor=4, mode="2d")
    >>> plan.group_of(5, "2d_col")
    [5, 7]

    A named mesh instead of the presets: ``Plan(mesh=Mesh.from_order("tp-dp-pp", tp=2,
    dp=2, pp=2), groups=["tp", "dp", "pp", "tp-dp"])`` (``mesh`` may also be a dict, fastest
    dimension first). Each group token is a group kind, queried by its name (``"tp-dp"``,
    or the same dimensions in another order); ``groups`` empty means one kind per
    dimension; ``"embd"`` and ``"pos_embd"`` are Megatron-LM's embedding groups (first and
    last pipeline stage), of which some ranks are no member. ``world_size`` defaults to the
    mesh's size; the preset arguments must keep their defaults.

    ``gpus_per_node=G`` (as ``pgroups plan --gpus-per-node G``) puts nodes of G consecutive
    ranks under the plan: ``to_json()`` then holds the ``locality`` object, and
    ``locality()`` / ``locality_warnings()`` need no argument.

    ``rank_map`` (a list, or the path of a JSON file as ``pgroups plan --rank-map FILE``
    takes) says where each mesh rank runs: entry r is the launcher rank that runs mesh rank
    r, and every rank the plan takes or answers is a launcher rank (docs/using/placement.md).
    """

    def __init__(
        self,
        world_size: Optional[int] = None,
        pipeline: int = 1,
        tensor: int = 1,
        mode: Optional[str] = None,
        depth: Optional[int] = None,
        legacy_sequence_dp: bool = False,
        seed: int = 1024,
        *,
        mesh: Union["Mesh", Mapping[str, int], Iterable[Tuple[str, int]], None] = None,
        groups: Optional[Iterable[str]] = None,
        gpus_per_node: Optional[int] = None,
        rank_map: Any = None,
    ) -> None:
        # The arguments over the defaults by the one C++ merge rule, which refuses a world
        # size below 1 and groups without a mesh as the CLI's flags are refused; one
        # crossing, whose answer is the C++ Layout.
        overrides = _pgroups.ConfigOverrides(
            world_size=check_int("world_size", world_size, allow_none=True),
            pipeline=check_int("pipeline", pipeline), tensor=check_int("tensor", tensor),
            mode=_tensor_mode(mode), depth=check_int("depth", depth, allow_none=True),
            legacy_sequence_dp=check_bool("legacy_sequence_dp", legacy_sequence_dp),
            seed=check_int("seed", seed), gpus_per_node=check_int("gpus_per_node", gpus_per_node, allow_none=True),
            mesh=_mesh_dims(mesh), groups=None if groups is None else check_tokens("groups", groups),
            rank_map=check_rank_map("rank_map", rank_map))
        self._layout = _pgroups.resolve_layout(None, overrides)

    @classmethod
    def from_config(cls, path: Union[str, "os.PathLike[str]"], world_size: Optional[int] = None, *,
                    pipeline: Optional[int] = None, tensor: Optional[int] = None, mode: Optional[str] = None,
                    depth: Optional[int] = None, legacy_sequence_dp: Optional[bool] = None,
                    seed: Optional[int] = None, mesh: Any = None, groups: Optional[Sequence[str]] = None,
                    gpus_per_node: Optional[int] = None, rank_map: Any = None) -> "Plan":
        """The plan of a configuration file: ``.toml``, ``.json`` or a Colossal-AI ``.py``
        config (read as literals, never executed). ``world_size`` and every other argument
        given override the file's values by the CLI's own rule (``pgroups plan --config``
        with flags: a new ``mode`` drops the file's 2.5d ``depth``); one world size must be
        given, except for a mesh (whose size is the product of its dimensions). Raises
        IoError, ParseError or ConfigError with the C++ messages (which name the file, line
        and column). The file's ``gpus_per_node`` (or the argument) stays with the plan, so
        that ``to_json()`` holds the CLI's ``locality`` object too."""
        overrides = _checked_overrides(pipeline, tensor, mode, depth, legacy_sequence_dp, seed, mesh, groups,
                                       world_size=world_size, gpus_per_node=gpus_per_node, rank_map=rank_map)
        return cls.from_layout(_pgroups.resolve_layout(_path("path", path), overrides, "world_size="))

    @classmethod
    def from_layout(cls, layout: "_pgroups.Layout") -> "Plan":
        """The plan of a C++ ``Layout`` (a context's, a recovery's, a placement's)."""
        if not isinstance(layout, _pgroups.Layout):
            raise TypeError(f"layout must be a pgroups Layout, not {type(layout).__name__}")
        plan = cls.__new__(cls)
        plan._layout = layout
        return plan

    @property
    def layout(self) -> "_pgroups.Layout":
        """The C++ ``Layout`` this plan answers from (for ``pgroups.place``)."""
        return self._layout

    # Sizes ---------------------------------------------------------------------------
    @property
    def world_size(self) -> int:
        return self._layout.world_size

    @property
    def pipeline_size(self) -> int:
        return self._layout.pipeline_size

    @property
    def tensor_size(self) -> int:
        return self._layout.tensor_size

    @property
    def data_parallel_size(self) -> int:
        return self._layout.data_parallel_size

    @property
    def tensor_mode(self) -> Optional[str]:
        """``None``, ``"1d"``, ``"2d"``, ``"2.5d"``, ``"3d"`` or ``"sequence"``."""
        return self._layout.config().mode

    @property
    def depth(self) -> Optional[int]:
        return self._layout.config().depth

    @property
    def base_seed(self) -> int:
        """The base of the per-kind seeds (``seed=``)."""
        return self._layout.config().seed

    @property
    def gpus_per_node(self) -> Optional[int]:
        """The GPUs (ranks) per node the configuration gives (``gpus_per_node=``, or the
        file's), None when it gives none: the nodes of ``locality()`` and ``to_json()``."""
        return self._layout.config().gpus_per_node

    @property
    def rank_map(self) -> Optional[List[int]]:
        """Where each mesh rank runs (entry r: the launcher rank of mesh rank r), None when
        every mesh rank runs on the launcher rank of its number."""
        entries = self._layout.config().rank_map
        return list(entries) if entries and entries != list(range(len(entries))) else None

    @property
    def config(self) -> Dict[str, object]:
        """The ``"config"`` object of ``to_dict()`` (SPEC section 4), from the same C++
        function: ``{"world_size", "pipeline", "tensor": {"size", "mode"[, "depth"]}}`` for
        presets, ``{"world_size", "mesh": {"order", "sizes"}, "groups"}`` for a mesh (its
        groups the kinds built)."""
        return json.loads(self._layout.config_json())

    @property
    def summary(self) -> str:
        """The shape in the configuration's own notation, as ``pgroups plan`` prints it
        after ``world size W = ``: ``"data 2 x pipeline 2 x tensor 4 (2d, q=2)"`` or ``"tp 2
        x dp 4 (order tp-dp, first fastest)"``."""
        return self._layout.summary

    @property
    def kind_notes(self) -> Dict[str, str]:
        """The line on how a kind's groups are chosen where its name does not say it
        (``sequence_dp``, ``embd``, ``pos_embd``), by kind name, as ``pgroups plan`` prints it."""
        return {kind["name"]: kind["note"] for kind in self._layout.group_kinds() if kind["note"]}

    def pipeline_stage(self, rank: int) -> int:
        """``rank``'s pipeline stage: its coordinate on the pipeline dimension (``pipe``
        of the presets, ``pp`` of a mesh), 0 when there is none."""
        return self._layout.pipeline_stage(check_int("rank", rank))

    @property
    def modes(self) -> List[ParallelMode]:
        """The preset modes this configuration creates, in creation order (GLOBAL first);
        empty for a mesh (see group_kinds)."""
        return [ParallelMode(name) for name in self._layout.modes()]

    @property
    def group_kinds(self) -> List[str]:
        """The names of every group kind, in creation order: the modes' values for a
        preset, the group tokens for a mesh."""
        return [kind["name"] for kind in self._layout.group_kinds()]

    @property
    def is_mesh(self) -> bool:
        return self._layout.is_mesh

    @property
    def mesh(self) -> Optional["Mesh"]:
        """The named mesh of a mesh plan; None for a preset."""
        dims = self._layout.config().mesh
        return Mesh(dims) if dims is not None else None

    @renamed_keywords(mode="kind")
    def has_kind(self, kind: KindLike) -> bool:
        """Whether the plan has the group kind (a ParallelMode or its name, or a mesh token in any order)."""
        return self._layout.has_kind(mode_value(kind))

    has_mode = renamed_method("has_mode", has_kind)

    def is_member(self, rank: int, kind: KindLike) -> bool:
        """Whether ``rank`` is in a group of the kind: False only for a partial kind
        (Megatron-LM's ``embd``, ``pos_embd``)."""
        return self._layout.is_member(check_int("rank", rank), mode_value(kind))

    def view(self, rank: int) -> "_pgroups.RankView":
        """``rank``'s view of the plan (pgroups/layout/rank_view.hpp): everything the rank
        asks of its groups (``is_member``, ``local_rank``, ``size``, ``members``,
        ``next_rank``/``previous_rank``, ``first_rank``/``last_rank``, ``seed``,
        ``pipeline_stage``, ``partition_key``, ``flattened_dims``, ``sharing``,
        ``communicators``), each kind by name or ParallelMode, answered from the C++ layout
        in O(group size) at most: a plan of 2**40 ranks answers at once for any rank. A rank
        in no group of a partial kind gets a StateError naming the kind and the rank from
        ``local_rank``, ``size``, ``members`` and the neighbour queries (ask ``is_member``)."""
        return _pgroups.RankView(self._layout, check_int("rank", rank))

    # Per mode and rank ---------------------------------------------------------------
    @renamed_keywords(mode="kind")
    def groups(self, kind: KindLike) -> List[List[int]]:
        """Every group of ``kind``, ascending by first rank, each ascending. O(world)."""
        return self._layout.groups(mode_value(kind))

    @renamed_keywords(mode="kind")
    def group_of(self, rank: int, kind: KindLike) -> List[int]:
        """The global ranks of ``rank``'s group in ``kind``, by local rank."""
        return self._layout.group_of(check_int("rank", rank), mode_value(kind))

    @renamed_keywords(mode="kind")
    def local_rank(self, rank: int, kind: KindLike) -> int:
        """``rank``'s position in its group of ``kind``."""
        return self._layout.local_rank(check_int("rank", rank), mode_value(kind))

    @renamed_keywords(mode="kind")
    def group_size(self, kind: KindLike) -> int:
        return self._layout.group_size(mode_value(kind))

    @renamed_keywords(mode="kind")
    def group_count(self, kind: KindLike) -> int:
        return self._layout.group_count(mode_value(kind))

    @renamed_keywords(mode="kind")
    def group_index(self, rank: int, kind: KindLike) -> int:
        """The position of ``rank``'s group among ``groups(kind)``."""
        return self._layout.group_index(check_int("rank", rank), mode_value(kind))

    @renamed_keywords(mode="kind")
    def seed(self, rank: int, kind: KindLike) -> int:
        """Colossal-AI's per-kind seed: base seed, and for TENSOR
        ``seed + tensor_local_rank + 1024 * pipeline_stage``."""
        return self._layout.seed(check_int("rank", rank), mode_value(kind))

    def coordinates(self, rank: int) -> Dict[str, int]:
        """``rank``'s coordinates, slowest first: ``data``, ``pipe``, then ``tensor`` or
        the mode's sub-coordinates (``row``/``col`` for 2d, ...)."""
        return {name: value for name, value, _ in self._layout.coordinates(check_int("rank", rank))}

    def coordinate_sizes(self) -> Dict[str, int]:
        """The size of each coordinate of ``coordinates``."""
        return {name: size for name, _, size in self._layout.coordinates(0)}

    def communicators(self, rank: Optional[int] = None, share: bool = True,
                      backend: str = "mpi") -> Dict[str, object]:
        """What the plan costs a rank in communicators, as ``pgroups explain`` and
        ``verify`` report it: ``{"kinds", "distinct", "singletons", "created"}``, with
        ``backend="nccl"`` also ``nccl_created`` and ``estimated_nccl_mib`` (a model, see
        docs/developing/performance.md). ``rank`` None gives the largest per-rank figures (``plan``'s);
        ``share=False`` counts one communicator per kind."""
        return _pgroups.communicator_bill(self._layout, check_int("rank", rank, allow_none=True),
                                          check_bool("share", share), check_token("backend", backend))

    # Output --------------------------------------------------------------------------
    def to_dict(self) -> Dict[str, object]:
        """The plan in the schema of ``pgroups plan --format json`` (SPEC section 4); a
        rank outside every group of a partial kind has ``None`` as local rank and size."""
        return json.loads(_pgroups.plan_json(self._layout))

    def to_json(self, indent: Optional[int] = None) -> str:
        """The plan as JSON text, keys sorted: the CLI's own printer, so compact it is byte
        for byte what ``pgroups plan --format json`` prints (without its newline), the
        ``locality`` object included when the plan has ``gpus_per_node``."""
        return _pgroups.plan_json(self._layout, -1 if indent is None else check_int("indent", indent, minimum=0))

    def locality(self, gpus_per_node: Optional[int] = None, format: str = "text") -> Union[str, Dict[str, object]]:
        """Where the groups sit on nodes of ``gpus_per_node`` consecutive ranks (default the
        plan's own ``gpus_per_node``), by the printer of ``pgroups plan --gpus-per-node G``:
        ``format="text"`` is its locality table, ``format="json"`` its ``"locality"``
        object as a dict. ConfigError when no G is known, or G does not divide the world."""
        if format not in ("text", "json"):
            raise ValueError(f"format must be 'text' or 'json', not {format!r}")
        text = _pgroups.locality_report(self._layout, check_int("gpus_per_node", gpus_per_node, allow_none=True),
                                        format)
        return json.loads(text) if format == "json" else text

    def locality_warnings(self, gpus_per_node: Optional[int] = None) -> List[str]:
        """The warnings ``pgroups plan --gpus-per-node G`` prints on stderr (without their
        ``pgroups: warning:`` prefix): tensor groups that cross nodes, and what is not
        judged above the counting limit."""
        return _pgroups.locality_warnings(self._layout,
                                          check_int("gpus_per_node", gpus_per_node, allow_none=True))

    def explain(self, rank: int) -> str:
        """One rank's picture as text, byte for byte ``pgroups explain --rank R``: its
        coordinates, then per kind its local rank, group size and group (long groups elided)."""
        return _pgroups.explain_text(self._layout, check_int("rank", rank))

    def after_loss(self, lost: Iterable[int] = (), shrink: Optional[str] = None, *,
                   alive: Optional[Iterable[int]] = None, joining: Iterable[int] = ()) -> "Recovery":
        """The layout the survivors run after ``lost`` ranks died (as ``pgroups plan
        --lost``): the replicas of the shrinking dimension (``shrink``: ``"dp"`` for a mesh,
        the data parallelism of a preset, unless named) that lost a rank are dropped, their
        healthy ranks become spares, every other replica keeps its ranks and groups.
        ``joining`` ids (at or past the world size) fill whole new replicas. ``alive=`` lists
        the ranks alive instead (the others lost, those past the world joining). Returns a
        :class:`Recovery`: its ``plan``, ``rank_map`` (entry r the old rank that runs new
        rank r), ``spares`` and ``lost``. ConfigError with the C++ message when no replica
        survives, for a rank out of range, a duplicate, or a dimension the plan lacks."""
        shrink_name = "" if shrink is None else check_token("shrink", shrink)
        if alive is not None:
            if tuple(lost) or tuple(joining):
                raise ValueError("after_loss takes alive= or lost=/joining=, not both")
            ranks = [check_int("alive", rank) for rank in alive]
            recovery = _pgroups.Recovery.from_alive(self._layout, ranks, shrink_name)
        else:
            recovery = _pgroups.Recovery(self._layout, [check_int("lost", rank) for rank in lost],
                                         [check_int("joining", rank) for rank in joining], shrink_name)
        return Recovery(recovery, Plan.from_layout(recovery.layout))

    def resized(self, world: int, shrink: Optional[str] = None) -> "Plan":
        """The largest layout of this shape that a world of ``world`` ranks holds, after an
        elastic restart with another number of ranks (as ``pgroups plan --resize-to``): the
        shrinking dimension (``"dp"`` unless named; a preset's data parallelism) takes as
        many whole replicas as fit, more or fewer than before; ranks from the new plan's
        ``world_size`` up to ``world`` are spares. A rank map does not carry over (the
        launcher numbers the new world). Where the dimension splits the data (``dp``, a
        preset's data, ``dp_*``, ``fsdp``...), the global batch scales with the replicas when
        the batch is kept per replica; another dimension's weights are re-sharded instead.
        ConfigError naming both sizes when not one replica fits."""
        shrink_name = "" if shrink is None else check_token("shrink", shrink)
        return Plan.from_layout(_pgroups.resized(self._layout, check_int("world", world), shrink_name))

    def what_if(self, level: str = "node", shrink: Optional[str] = None) -> Dict[str, Any]:
        """Before any loss, what the loss of one node would leave (as ``pgroups plan --what-if
        node --format json``'s ``what_if``): the nodes of the plan's ``gpus_per_node``, and per
        class of outcome (by replicas dropped) how many nodes fall in it, the first of them,
        the shrinking dimension's new size (0: nothing survives), the spares, the renumbered
        ranks' range and the communicators per surviving rank. ConfigError without
        ``gpus_per_node``, and with the C++ messages."""
        if level != "node":
            raise _pgroups.ConfigError(f"what_if level {level!r} is not one pgroups answers for: 'node'")
        shrink_name = "" if shrink is None else check_token("shrink", shrink)
        gpus = self._layout.config().gpus_per_node
        if gpus is None:
            raise _pgroups.ConfigError("Plan.what_if('node') needs the nodes: make the plan with gpus_per_node=G")
        result: Dict[str, Any] = json.loads(_pgroups.what_if_node_json(self._layout, gpus, shrink_name))
        return result

    def kind_name(self, kind: KindLike) -> str:
        """The kind's name as the plan spells it (``"dp-tp"`` is ``"tp-dp"`` when the plan
        names it so; a ParallelMode is its value). StateError for a kind the plan lacks."""
        return self._layout.kind_name(mode_value(kind))

    def setting_fields(self) -> List[Tuple[str, str]]:
        """The plan's part of an agreement record, as the MPI context encodes it (what every
        torch front door's agreement starts with)."""
        return list(_pgroups.setting_fields(self._layout))

    def setting_text(self) -> str:
        """The plan's part of a mismatch message, as the MPI context's."""
        return str(_pgroups.setting_text(self._layout))

    def describe(self) -> str:
        """One line, e.g. ``"W=16 pipeline=2 tensor=8 mode=2.5d depth=2"``."""
        return self._layout.describe()

    def __repr__(self) -> str:
        c = self._layout.config()
        nodes = "" if c.gpus_per_node is None else f", gpus_per_node={c.gpus_per_node}"
        if c.mesh is not None:
            dims = ", ".join(f"{name!r}: {size}" for name, size in c.mesh)
            return f"Plan(mesh={{{dims}}}, groups={self.group_kinds!r}{nodes})"
        text = f"Plan(world_size={c.world_size}, pipeline={c.pipeline}, tensor={c.tensor}"
        if c.mode is not None:
            text += f", mode={c.mode!r}"
        if c.depth is not None:
            text += f", depth={c.depth}"
        if c.legacy_sequence_dp:
            text += ", legacy_sequence_dp=True"
        if c.seed != 1024:
            text += f", seed={c.seed}"
        return text + nodes + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and self._layout.config() == other._layout.config()

    def __hash__(self) -> int:
        return hash(repr(self))


class Mesh:
    """A named device mesh: ranks arranged over named dimensions, the first varying
    fastest (Megatron-LM's order strings, e.g. ``"tp-cp-dp-pp"``). A group over a set of
    dimensions is the set of ranks that agree on every other dimension; dimensions are
    named as a list or as one string joined by ``-`` (``"tp-dp"``), in any order.

    ``Mesh({"tp": 2, "dp": 2, "pp": 2})`` (a dict keeps its order: fastest first) or
    ``Mesh.from_order("tp-cp-dp-pp", tp=2, cp=1, dp=3, pp=2)``. Raises ConfigError for an
    empty or repeated name, a size below 1, or an unknown dimension in a query.
    """

    def __init__(self, dims: Union[Mapping[str, int], Iterable[Tuple[str, int]]]) -> None:
        self._mesh = _pgroups.Mesh(_dim_pairs("dims", dims))

    @classmethod
    def from_order(cls, order: str, /, **sizes: int) -> "Mesh":
        """The mesh of a Megatron-LM order string; a name without a size has size 1, and
        a size whose name is not in the order must be 1 (ConfigError otherwise). ``order``
        is positional only, so that a dimension may be called anything, ``order`` too."""
        return cls(_pgroups.mesh_from_order(
            check_token("order", order), [(name, check_int(name, size)) for name, size in sizes.items()]))

    @property
    def size(self) -> int:
        return self._mesh.size

    @property
    def dims(self) -> Dict[str, int]:
        """The dimensions and their sizes, fastest first."""
        return dict(self._mesh.dims())

    @property
    def order(self) -> str:
        return "-".join(name for name, _ in self._mesh.dims())

    def coordinates(self, rank: int) -> Dict[str, int]:
        return dict(zip(self.dims, self._mesh.coordinates(check_int("rank", rank))))

    def rank_of(self, coordinates: Mapping[str, int]) -> int:
        """Inverse of ``coordinates``; a missing dimension counts as 0."""
        return self._mesh.rank_of([check_int(f"coordinates[{name!r}]", coordinates.get(name, 0)) for name in self.dims])

    def group_of(self, rank: int, dims: DimsLike) -> List[int]:
        return self._mesh.group_of(check_int("rank", rank), _dim_list(dims))

    def groups(self, dims: DimsLike) -> List[List[int]]:
        return self._mesh.groups(_dim_list(dims))

    def local_rank(self, rank: int, dims: DimsLike) -> int:
        return self._mesh.local_rank(check_int("rank", rank), _dim_list(dims))

    def group_index(self, rank: int, dims: DimsLike) -> int:
        return self._mesh.group_index(check_int("rank", rank), _dim_list(dims))

    def group_size(self, dims: DimsLike) -> int:
        return self._mesh.group_size(_dim_list(dims))

    def group_count(self, dims: DimsLike) -> int:
        return self._mesh.group_count(_dim_list(dims))

    def __repr__(self) -> str:
        return "Mesh({" + ", ".join(f"{name!r}: {size}" for name, size in self._mesh.dims()) + "})"


def _dim_pairs(name: str, dims: object) -> List[Tuple[str, int]]:
    if isinstance(dims, Mapping):
        items = list(dims.items())
    elif isinstance(dims, (list, tuple)):
        items = []
        for i, item in enumerate(dims):
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise TypeError(f"{name}[{i}] must be a (name, size) pair, not {item!r}")
            items.append(tuple(item))
    else:
        raise TypeError(f"{name} must be a dict of dimension sizes or a list of (name, size) pairs, not {dims!r}")
    return [(check_token(f"{name} dimension name", dim), check_int(f"{name}[{dim!r}]", size)) for dim, size in items]


def _checked_overrides(pipeline: object, tensor: object, mode: object, depth: object, legacy_sequence_dp: object,
                       seed: object, mesh: object, groups: object, *, world_size: object = None,
                       gpus_per_node: object = None, rank_map: object = None) -> "_pgroups.ConfigOverrides":
    """The settings given beside a config file, type-checked, as the C++ ConfigOverrides
    of the one merge (``_pgroups.resolve_layout`` / ``resolve_config``); None for each one
    not given."""
    return _pgroups.ConfigOverrides(
        world_size=check_int("world_size", world_size, allow_none=True),
        pipeline=check_int("pipeline", pipeline, allow_none=True),
        tensor=check_int("tensor", tensor, allow_none=True),
        mode=_tensor_mode(mode),
        depth=check_int("depth", depth, allow_none=True),
        legacy_sequence_dp=None if legacy_sequence_dp is None else check_bool("legacy_sequence_dp", legacy_sequence_dp),
        seed=check_int("seed", seed, allow_none=True),
        gpus_per_node=check_int("gpus_per_node", gpus_per_node, allow_none=True),
        mesh=_mesh_dims(mesh),
        groups=None if groups is None else check_tokens("groups", groups),
        rank_map=check_rank_map("rank_map", rank_map),
    )


def _mesh_dims(mesh: object) -> Optional[List[Tuple[str, int]]]:
    if mesh is None:
        return None
    if isinstance(mesh, Mesh):
        return list(mesh.dims.items())
    return _dim_pairs("mesh", mesh)


def _dim_list(dims: DimsLike) -> List[str]:
    if isinstance(dims, str):
        return check_token("dims", dims).split("-")
    return check_tokens("dims", dims)


def _path(name: str, path: object) -> bytes:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, not {path!r} ({type(path).__name__})")
    # The file system's bytes, as open() would use them: any name the system holds, and an
    # empty one or one with a NUL left whole for C++ to refuse (read_config_file).
    return os.fsencode(path)


def _tensor_mode(mode: object) -> Optional[str]:
    if mode is None:
        return None
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a string such as '2d' or None, not {mode!r}")
    return mode

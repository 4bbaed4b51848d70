"""Plan and Mesh: the pure layout (no MPI), computed by the C++ library."""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _pgroups
from ._modes import ModeLike, ParallelMode, mode_value

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
    cost O(group size) or less; ``groups`` and ``to_json`` are O(world size).

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
    ) -> None:
        self._layout = _pgroups.Layout(
            0 if world_size is None else int(world_size), int(pipeline), int(tensor), _tensor_mode(mode),
            None if depth is None else int(depth), bool(legacy_sequence_dp), int(seed), _mesh_dims(mesh),
            [str(g) for g in groups] if groups is not None else [])

    @classmethod
    def from_config(cls, path: Union[str, "os.PathLike[str]"], world_size: Optional[int] = None) -> "Plan":
        """The plan of a configuration file: ``.toml``, ``.json`` or a Colossal-AI ``.py``
        config (read as literals, never executed). ``world_size`` overrides the file's
        ``world_size`` key; one of the two must be given, except for a ``[mesh]`` (whose
        size is the product of its dimensions). Raises IoError, ParseError or
        ConfigError with the C++ messages (which name the file, line and column)."""
        config = _pgroups.read_config_file(os.fspath(path))
        if world_size is not None:
            config["world_size"] = int(world_size)
        if not config["world_size"] and config["mesh"] is None:
            raise _pgroups.ConfigError(
                f"{os.fspath(path)}: no world size: give world_size= or a `world_size` key in the parallel table")
        return cls._from_config_dict(config)

    @classmethod
    def _from_config_dict(cls, config: Mapping[str, object]) -> "Plan":
        return cls(config["world_size"], config["pipeline"], config["tensor"], config["mode"],  # type: ignore[arg-type]
                   config["depth"], config["legacy_sequence_dp"], config["seed"],  # type: ignore[arg-type]
                   mesh=config.get("mesh"), groups=config.get("groups") or None)  # type: ignore[arg-type]

    @classmethod
    def _from_layout(cls, layout: "_pgroups.Layout") -> "Plan":
        plan = cls.__new__(cls)
        plan._layout = layout
        return plan

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
        return self._layout.config()["mode"]

    @property
    def depth(self) -> Optional[int]:
        return self._layout.config()["depth"]

    @property
    def config(self) -> Dict[str, object]:
        """The configuration as a dict: world_size, pipeline, tensor, mode, depth,
        legacy_sequence_dp, seed."""
        return self._layout.config()

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
        config = self._layout.config()
        return Mesh(config["mesh"]) if config["mesh"] is not None else None

    def has_mode(self, mode: ModeLike) -> bool:
        """Whether the plan has the group kind (a mode, or a mesh token in any order)."""
        return self._layout.has_kind(mode_value(mode))

    def is_member(self, rank: int, kind: ModeLike) -> bool:
        """Whether ``rank`` is in a group of the kind: False only for a partial kind
        (Megatron-LM's ``embd``, ``pos_embd``)."""
        return self._layout.is_member(rank, mode_value(kind))

    # Per mode and rank ---------------------------------------------------------------
    def groups(self, mode: ModeLike) -> List[List[int]]:
        """Every group of ``mode``, ascending by first rank, each ascending. O(world)."""
        return self._layout.groups(mode_value(mode))

    def group_of(self, rank: int, mode: ModeLike) -> List[int]:
        """The global ranks of ``rank``'s group in ``mode``, by local rank."""
        return self._layout.group_of(rank, mode_value(mode))

    def local_rank(self, rank: int, mode: ModeLike) -> int:
        """``rank``'s position in its group of ``mode``."""
        return self._layout.local_rank(rank, mode_value(mode))

    def group_size(self, mode: ModeLike) -> int:
        return self._layout.group_size(mode_value(mode))

    def group_count(self, mode: ModeLike) -> int:
        return self._layout.group_count(mode_value(mode))

    def group_index(self, rank: int, mode: ModeLike) -> int:
        """The position of ``rank``'s group among ``groups(mode)``."""
        return self._layout.group_index(rank, mode_value(mode))

    def seed(self, rank: int, mode: ModeLike) -> int:
        """Colossal-AI's per-mode seed: base seed, and for TENSOR
        ``seed + tensor_local_rank + 1024 * pipeline_stage``."""
        return self._layout.seed(rank, mode_value(mode))

    def coordinates(self, rank: int) -> Dict[str, int]:
        """``rank``'s coordinates, slowest first: ``data``, ``pipe``, then ``tensor`` or
        the mode's sub-coordinates (``row``/``col`` for 2d, ...)."""
        return {name: value for name, value, _ in self._layout.coordinates(rank)}

    def coordinate_sizes(self) -> Dict[str, int]:
        """The size of each coordinate of ``coordinates``."""
        return {name: size for name, _, size in self._layout.coordinates(0)}

    def communicators(self, rank: Optional[int] = None, share: bool = True,
                      backend: str = "mpi") -> Dict[str, object]:
        """What the plan costs a rank in communicators, as ``pgroups explain`` and
        ``verify`` report it: ``{"kinds", "distinct", "singletons", "created"}``, with
        ``backend="nccl"`` also ``nccl_created`` and ``estimated_nccl_mib`` (a model, see
        docs/performance.md). ``rank`` None gives the largest per-rank figures (``plan``'s);
        ``share=False`` counts one communicator per kind."""
        return _pgroups.communicator_bill(self._layout, rank, share, backend)

    # Output --------------------------------------------------------------------------
    def to_dict(self) -> Dict[str, object]:
        """The plan in the schema of ``pgroups plan --format json`` (SPEC section 4); a
        rank outside every group of a partial kind has ``None`` as local rank and size."""
        config = self._layout.config()
        out_config: Dict[str, object]
        if config["mesh"] is not None:
            out_config = {"world_size": config["world_size"],
                          "mesh": {"order": "-".join(name for name, _ in config["mesh"]),
                                   "sizes": dict(config["mesh"])},
                          "groups": self.group_kinds}
        else:
            tensor: Dict[str, object] = {"size": config["tensor"], "mode": config["mode"]}
            if config["mode"] == "2.5d" and config["depth"] is not None:
                tensor["depth"] = config["depth"]
            out_config = {"world_size": config["world_size"], "pipeline": config["pipeline"], "tensor": tensor}
            if config["legacy_sequence_dp"]:
                out_config["legacy_sequence_dp"] = True
        modes: Dict[str, object] = {}
        ranks = range(self.world_size)
        for kind in self._layout.group_kinds():
            name = kind["name"]
            size = self._layout.group_size(name)
            members = [not kind["partial"] or self._layout.is_member(r, name) for r in ranks]
            modes[name] = {
                "groups": self._layout.groups(name),
                "local_rank": [self._layout.local_rank(r, name) if member else None
                               for r, member in zip(ranks, members)],
                "world_size": [size if member else None for member in members],
            }
        return {"config": out_config, "data_parallel_size": self.data_parallel_size, "modes": modes,
                "communicators": self.communicators()}

    def to_json(self, indent: Optional[int] = None) -> str:
        """``to_dict()`` as JSON text, keys sorted; compact, byte for byte what
        ``pgroups plan --format json`` prints (without its newline), unless ``indent``."""
        separators = (",", ":") if indent is None else None
        return json.dumps(self.to_dict(), indent=indent, separators=separators, sort_keys=True)

    def explain(self, rank: int) -> str:
        """One rank's picture as text, as ``pgroups explain --rank R``: its coordinates,
        then per kind its local rank, group size and group (long groups elided)."""
        coords = self._layout.coordinates(rank)
        kinds = self.group_kinds
        width = max([20] + [len(name) for name in kinds])
        lines = [
            f"rank {rank} of {self.world_size} ({self._layout.describe()})",
            "coordinates: " + " ".join(f"{name}={value}/{size}" for name, value, size in coords),
            "",
            f"{'group' if self.is_mesh else 'mode':<{width}} {'local rank':>12} {'size':>12}  group",
        ]
        for name in kinds:
            if not self._layout.is_member(rank, name):
                lines.append(f"{name:<{width}} {'-':>12} {'-':>12}  not a member")
                continue
            group = self._layout.group_of(rank, name)
            lines.append(f"{name:<{width}} {self._layout.local_rank(rank, name):>12} {len(group):>12}  "
                         f"{_elided(group)}")
        lines += ["", "communicators: " + _pgroups.communicator_bill_text(self._layout, rank)]
        return "\n".join(lines) + "\n"

    def describe(self) -> str:
        """One line, e.g. ``"W=16 pipeline=2 tensor=8 mode=2.5d depth=2"``."""
        return self._layout.describe()

    def __repr__(self) -> str:
        c = self._layout.config()
        if c["mesh"] is not None:
            dims = ", ".join(f"{name!r}: {size}" for name, size in c["mesh"])
            return f"Plan(mesh={{{dims}}}, groups={self.group_kinds!r})"
        text = f"Plan(world_size={c['world_size']}, pipeline={c['pipeline']}, tensor={c['tensor']}"
        if c["mode"] is not None:
            text += f", mode={c['mode']!r}"
        if c["depth"] is not None:
            text += f", depth={c['depth']}"
        if c["legacy_sequence_dp"]:
            text += ", legacy_sequence_dp=True"
        if c["seed"] != 1024:
            text += f", seed={c['seed']}"
        return text + ")"

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
        items = list(dims.items()) if isinstance(dims, Mapping) else [tuple(d) for d in dims]
        self._mesh = _pgroups.Mesh([(str(name), int(size)) for name, size in items])

    @classmethod
    def from_order(cls, order: str, **sizes: int) -> "Mesh":
        """The mesh of a Megatron-LM order string; a name without a size has size 1, and
        a size whose name is not in the order must be 1 (ConfigError otherwise)."""
        names = order.split("-")
        extra = {name: size for name, size in sizes.items() if name not in names and size != 1}
        if extra:
            raise _pgroups.ConfigError(
                f"sizes {extra} name dimensions missing from the order '{order}'; a dimension outside "
                "the order must have size 1")
        return cls([(name, sizes.get(name, 1)) for name in names])

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
        return dict(zip(self.dims, self._mesh.coordinates(rank)))

    def rank_of(self, coordinates: Mapping[str, int]) -> int:
        """Inverse of ``coordinates``; a missing dimension counts as 0."""
        return self._mesh.rank_of([int(coordinates.get(name, 0)) for name in self.dims])

    def group_of(self, rank: int, dims: DimsLike) -> List[int]:
        return self._mesh.group_of(rank, _dim_list(dims))

    def groups(self, dims: DimsLike) -> List[List[int]]:
        return self._mesh.groups(_dim_list(dims))

    def local_rank(self, rank: int, dims: DimsLike) -> int:
        return self._mesh.local_rank(rank, _dim_list(dims))

    def group_index(self, rank: int, dims: DimsLike) -> int:
        return self._mesh.group_index(rank, _dim_list(dims))

    def group_size(self, dims: DimsLike) -> int:
        return self._mesh.group_size(_dim_list(dims))

    def group_count(self, dims: DimsLike) -> int:
        return self._mesh.group_count(_dim_list(dims))

    def __repr__(self) -> str:
        return "Mesh({" + ", ".join(f"{name!r}: {size}" for name, size in self._mesh.dims()) + "})"


def _mesh_dims(mesh: object) -> Optional[List[Tuple[str, int]]]:
    if mesh is None:
        return None
    if isinstance(mesh, Mesh):
        return list(mesh.dims.items())
    items = list(mesh.items()) if isinstance(mesh, Mapping) else [tuple(d) for d in mesh]  # type: ignore[union-attr]
    return [(str(name), int(size)) for name, size in items]


def _dim_list(dims: DimsLike) -> List[str]:
    return dims.split("-") if isinstance(dims, str) else [str(d) for d in dims]


def _tensor_mode(mode: Optional[str]) -> Optional[str]:
    if mode is None:
        return None
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a string such as '2d' or None, not {mode!r}")
    return mode


def _elided(members: Sequence[int], keep: int = 4) -> str:
    if len(members) <= 2 * keep + 1:
        return "[" + ", ".join(map(str, members)) + "]"
    shown = [str(m) for m in members[:keep]] + ["..."] + [str(m) for m in members[-keep:]]
    return "[" + ", ".join(shown) + "]"

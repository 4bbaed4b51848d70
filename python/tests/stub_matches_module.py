"""The type stub python/pgroups/_pgroups.pyi against the compiled module it describes.

Run with the built package on PYTHONPATH (CTest does): every public name of
pgroups._pgroups has a stub entry and every stub entry a name of the module; each class's
methods and properties likewise, a property as a property; and each function's parameters
as pybind11 reports them (their number, the keyword-only marker, which have defaults, and
their names where the binding names them). Stub-only helpers (type aliases) start with an
underscore; an entry (a class's member too) documented "Present only when with_mpi is
True" may be absent from a module built without MPI. Exits 1 listing every difference.
"""

import ast
import inspect
import pathlib
import re
import sys

import pgroups._pgroups as module

STUB = pathlib.Path(__file__).resolve().parents[1] / "pgroups" / "_pgroups.pyi"
# Dunders the stub describes when the binding defines them; pybind11 adds many others.
DUNDERS = {"__init__", "__eq__", "__hash__", "__version__"}


def public(name):
    return not name.startswith("_") or name in DUNDERS


def split_top(text):
    """Splits a parameter list at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def module_params(name, obj):
    """[(name, has_default)] and '*' as pybind11's docstring gives them; None when overloaded."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    match = re.match(re.escape(name) + r"\((.*)\) ->", doc.splitlines()[0] if doc else "")
    if not match:
        return None
    params = []
    for part in split_top(match.group(1)):
        if part == "*":
            params.append(("*", False))
            continue
        pname = part.split(":", 1)[0].split("=", 1)[0].strip()
        params.append((pname, "=" in part))
    if params and params[0][0] == "self":
        params = params[1:]
    return params


def stub_params(node):
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    params = [(a.arg, d) for a, d in zip(positional, defaults)]
    if args.kwonlyargs:
        params.append(("*", False))
        params += [(a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if params and params[0][0] in ("self", "cls") and not is_static(node):
        params = params[1:]
    return params


def is_static(node):
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def is_property(node):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def compare_params(where, name, obj, node, problems):
    theirs = module_params(name, obj)
    if theirs is None:
        return
    ours = stub_params(node)
    if len(theirs) != len(ours):
        problems.append(f"{where}{name}: the module takes {[p for p, _ in theirs]}, the stub {[p for p, _ in ours]}")
        return
    for (tname, tdefault), (oname, odefault) in zip(theirs, ours):
        if tname == "*" or oname == "*":
            if tname != oname:
                problems.append(f"{where}{name}: keyword-only marker differs (module {tname!r}, stub {oname!r})")
            continue
        if not re.fullmatch(r"arg\d+", tname) and tname != oname:
            problems.append(f"{where}{name}: parameter {oname!r} of the stub is {tname!r} in the module")
        if tdefault != odefault:
            state = "has" if tdefault else "has no"
            problems.append(f"{where}{name}: parameter {oname!r} {state} a default in the module")


def stub_entries(body):
    """{name: node} of the top-level (or class-level) definitions of a stub body."""
    entries = {}
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            entries[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            entries[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    entries[target.id] = node
    return entries


def check_class(cls, node, problems):
    where = f"{cls.__name__}."
    stub = {n: e for n, e in stub_entries(node.body).items() if public(n)}
    if issubclass(cls, BaseException):
        members = {}  # exceptions: the hierarchy is checked, not BaseException's members
    else:
        members = {n: v for n, v in vars(cls).items() if public(n) and n != "__version__"}
        if type(members.get("__init__")).__name__ == "wrapper_descriptor":
            del members["__init__"]  # no constructor bound: pybind11's, which refuses
    for name in sorted(members.keys() - stub.keys()):
        problems.append(f"{where}{name} is in the module, not in the stub")
    for name in sorted(stub.keys() - members.keys()):
        if not (mpi_only(stub[name]) and not module.with_mpi):
            problems.append(f"{where}{name} is in the stub, not in the module")
    for name in sorted(members.keys() & stub.keys()):
        value, entry = members[name], stub[name]
        module_property = isinstance(value, property)
        stub_property = isinstance(entry, ast.AnnAssign) or (isinstance(entry, ast.FunctionDef) and is_property(entry))
        if module_property != stub_property:
            kind = "a property" if module_property else "a method"
            problems.append(f"{where}{name} is {kind} in the module, not in the stub")
        elif isinstance(entry, ast.FunctionDef) and not stub_property:
            if isinstance(value, staticmethod) != is_static(entry):
                problems.append(f"{where}{name}: static in one of module and stub only")
            compare_params(where, name, getattr(cls, name), entry, problems)
    if node.bases and isinstance(node.bases[0], ast.Name):
        base = node.bases[0].id
        if cls.__mro__[1].__name__ != base:
            problems.append(f"{cls.__name__}'s base is {cls.__mro__[1].__name__} in the module, {base} in the stub")


def mpi_only(node):
    """Whether the stub documents the entry as bound only with MPI."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return (ast.get_docstring(node) or "").startswith("Present only when with_mpi is True")
    return False


def main():
    tree = ast.parse(STUB.read_text(), str(STUB))
    stub = {n: e for n, e in stub_entries(tree.body).items() if public(n)}
    names = {n for n in vars(module) if public(n)}
    problems = []
    for name in sorted(names - stub.keys()):
        problems.append(f"{name} is in the module, not in the stub")
    for name in sorted(stub.keys() - names):
        if not (mpi_only(stub[name]) and not module.with_mpi):
            problems.append(f"{name} is in the stub, not in the module")
    for name in sorted(names & stub.keys()):
        value, entry = getattr(module, name), stub[name]
        if inspect.isclass(value) != isinstance(entry, ast.ClassDef):
            problems.append(f"{name}: a class in one of module and stub only")
        elif inspect.isclass(value):
            check_class(value, entry, problems)
        elif callable(value) != isinstance(entry, ast.FunctionDef):
            problems.append(f"{name}: a function in one of module and stub only")
        elif callable(value):
            compare_params("", name, value, entry, problems)
    if problems:
        print(f"{STUB.name} does not match {module.__file__}:", *problems, sep="\n  ")
        return 1
    print(f"{STUB.name} matches the module: {len(names)} names, their members and parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())

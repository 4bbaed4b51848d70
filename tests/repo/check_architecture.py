"""The architecture as a test: docs/developing/architecture.md's table of layers is the whole
of what each layer's sources may include, and its Python rooms name every module.

For each layer row (`| layer | sources | target | what it is | may include |`), the layers
named in "may include", and theirs in turn, are what the layer's files (its `src/` and
`include/pgroups/` folders) may include as "pgroups/<layer>/..."; the libraries named there
(or by a layer it may include) are the only outside headers among those this check knows
(<mpi.h>, <nccl.h>, CUDA's, gloo's, PMIx's, toml++, nlohmann-json, fmt). Every module of
python/pgroups must be named in the document (as `name.py`). Prints each violation and exits
1; `--self-test` checks that a file of launch including layout is caught.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "developing" / "architecture.md"
# Outside headers the check knows, by the name the table gives their library.
LIBRARIES = {
    "<mpi.h>": re.compile(r"^mpi(-ext)?\.h$"),
    "<nccl.h>": re.compile(r"^nccl(_net)?\.h$"),
    "CUDA runtime": re.compile(r"^cuda"),
    "libgloo": re.compile(r"^gloo/"),
    "libpmix": re.compile(r"^pmix"),
    "toml++": re.compile(r"^toml\+\+/"),
    "nlohmann-json": re.compile(r"^nlohmann/"),
    "fmt": re.compile(r"^fmt/"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)


def layer_rows(text):
    """{layer: (layers it names, libraries it names)} from the table's rows."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[1].startswith("`src/"):
            continue
        rows[cells[0]] = cells[4]
    layers = {}
    for name, cell in rows.items():
        named = {other for other in rows if re.search(rf"\b{re.escape(other)}\b", cell) and other != name}
        libraries = {lib for lib in LIBRARIES if lib in cell}
        layers[name] = (named, libraries)
    return layers


def allowed(layers):
    """{layer: (layers it may include, libraries it may include)}, closed over the table."""
    result = {}
    for name in layers:
        seen, stack, libraries = set(), [name], set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            named, libs = layers[current]
            libraries |= libs
            stack.extend(named)
        result[name] = (seen, libraries)
    return result


def violations(root, layers, extra_files=()):
    problems = []
    rules = allowed(layers)
    for name, (may_layers, may_libraries) in sorted(rules.items()):
        files = [p for folder in (root / "src" / name, root / "include" / "pgroups" / name) if folder.is_dir()
                 for p in sorted(folder.rglob("*")) if p.suffix in (".cpp", ".hpp", ".h", ".cu")]
        files += [p for layer, p in extra_files if layer == name]
        for path in files:
            for quote, target in INCLUDE.findall(path.read_text(errors="replace")):
                where = path.relative_to(root) if path.is_relative_to(root) else path
                used = re.match(r"pgroups/([a-z_]+)/", target)
                if quote == '"' and used and used.group(1) in layers and used.group(1) not in may_layers:
                    problems.append(f"{where}: the {name} layer includes {target}, of the {used.group(1)} layer, "
                                    f"which its row of {DOC.name} does not allow")
                for library, pattern in LIBRARIES.items():
                    if quote == "<" and pattern.search(target) and library not in may_libraries:
                        problems.append(f"{where}: the {name} layer includes <{target}> ({library}), which its row "
                                        f"of {DOC.name} does not allow")
    return problems


# A call such as MPI_Allgather( outside comments and string literals.
MPI_CALL = re.compile(r"\bMPI_[A-Z][A-Za-z_]*\s*\(")
CODE_ONLY = re.compile(r'//[^\n]*|"(?:\\.|[^"\\])*"')


def raw_mpi_in_cli(root):
    """The CLI's raw MPI lives in its MPI transport (cli/mpi_job.*) alone."""
    problems = []
    for path in sorted((root / "cli").glob("*.[ch]pp")):
        if path.stem == "mpi_job":
            continue
        code = CODE_ONLY.sub("", path.read_text(errors="replace"))
        if "<mpi.h>" in code or MPI_CALL.search(code):
            problems.append(f"cli/{path.name} calls MPI itself: the CLI's raw MPI belongs in cli/mpi_job.cpp, "
                            "its JobTransport")
    return problems


def unnamed_modules(root, text):
    return [f"python/pgroups/{p.name} is not named in {DOC.name}"
            for p in sorted((root / "python" / "pgroups").glob("*.py")) if p.name not in text]


def main():
    text = DOC.read_text()
    layers = layer_rows(text)
    if len(layers) < 10:
        print(f"{DOC}: found {len(layers)} layer rows, expected the table of ten")
        return 1
    if "--self-test" in sys.argv:
        probe = pathlib.Path(sys.argv[sys.argv.index("--self-test") + 1])
        probe.write_text('#include "pgroups/layout/layout.hpp"\n')
        caught = violations(ROOT, layers, [("launch", probe)])
        # And a CLI file beside the MPI transport that calls MPI (a root of its own).
        (probe.parent / "cli").mkdir(exist_ok=True)
        (probe.parent / "cli" / "probe.cpp").write_text('void f() { MPI_Barrier(MPI_COMM_WORLD); }  // "MPI_x("\n')
        caught += raw_mpi_in_cli(probe.parent)
        print("\n".join(caught))
        return 0 if (any("the launch layer includes pgroups/layout/layout.hpp" in c for c in caught) and
                     any("cli/probe.cpp calls MPI itself" in c for c in caught)) else 1
    problems = violations(ROOT, layers) + unnamed_modules(ROOT, text) + raw_mpi_in_cli(ROOT)
    print("\n".join(problems) if problems else f"{len(layers)} layers include only what {DOC.name} allows, and it "
          "names every Python module")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# ${PGROUPS_FUZZ_SECONDS:-30} seconds over a seed corpus made from the repository's
# configs and golden files. Exits non-zero on any finding; crash inputs are kept in
# build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${PGROUPS_FUZZ_SECONDS:-30}
build=build-fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DPGROUPS_BUILD_FUZZERS=ON -DPGROUPS_SANITIZE=address,undefined -DPGROUPS_WITH_MPI=OFF -DPGROUPS_WITH_NCCL=OFF \
  -DPGROUPS_BUILD_TESTS=OFF -DPGROUPS_BUILD_BENCH=OFF -DPGROUPS_BUILD_EXAMPLES=OFF -DPGROUPS_BUILD_CLI=OFF \
  -DPGROUPS_INSTALL=OFF -DPGROUPS_BUILD_PYTHON=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

corpus="$build/corpus"
rm -rf "$corpus" "$build/findings"
mkdir -p "$corpus"/{toml,json,python,layout} "$build/findings"
cp tests/data/configs/*.toml "$corpus/toml/"
cp tests/data/configs/*.json "$corpus/json/"
cp tests/data/configs/*.py "$corpus/python/"
# Each golden layout's config becomes a JSON seed, and invalid.json's configs too.
python3 - "$corpus/json" <<'PY'
import glob, json, sys
out = sys.argv[1]
configs = [json.load(open(f))["config"] for f in sorted(glob.glob("tests/data/golden/w*.json"))]
configs += [e["config"] for e in json.load(open("tests/data/golden/invalid.json"))]
for i, c in enumerate(configs):
    open(f"{out}/golden_{i}.json", "w").write(json.dumps({"parallel": c}))
PY
# The layout fuzzer reads a format byte (0 toml, 1 json, 2 python) before the text.
for f in "$corpus"/toml/*; do { printf '\x00'; cat "$f"; } >"$corpus/layout/t_$(basename "$f")"; done
for f in "$corpus"/json/*; do { printf '\x01'; cat "$f"; } >"$corpus/layout/j_$(basename "$f")"; done
for f in "$corpus"/python/*; do { printf '\x02'; cat "$f"; } >"$corpus/layout/p_$(basename "$f")"; done

# The store server's seeds: requests of torch's protocol (query byte, 64-bit lengths).
mkdir -p "$corpus/store"
python3 - "$corpus/store" <<'PY'
import struct, sys
out = sys.argv[1]
field = lambda b: struct.pack("<Q", len(b)) + b
validate = b"\x00" + struct.pack("<I", 0x3C85F7CE) + b"\x0d" + struct.pack("<I", 7)
seeds = {
    "ping": validate,
    "set_get": validate + b"\x01" + field(b"/k") + field(b"v") + b"\x03" + field(b"/k"),
    "add": b"\x04" + field(b"/n") + struct.pack("<q", 5) + b"\x04" + field(b"/n") + struct.pack("<q", -7),
    "check": b"\x05" + struct.pack("<Q", 2) + field(b"/k") + field(b"/absent"),
    "wait_cancel": b"\x06" + struct.pack("<Q", 1) + field(b"/absent") + b"\x0c",
}
for name, data in seeds.items():
    open(f"{out}/{name}", "wb").write(data)
PY

status=0
for target in toml_reader json_reader python_reader layout store_server; do
  case $target in
    toml_reader) seeds=$corpus/toml ;;
    json_reader) seeds=$corpus/json ;;
    python_reader) seeds=$corpus/python ;;
    layout) seeds=$corpus/layout ;;
    store_server) seeds=$corpus/store ;;
  esac
  log="$build/fuzz_$target.log"
  if "$build/fuzz/fuzz_$target" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix="$build/findings/${target}-" -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz_$target: $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$log"), no findings"
  else
    echo "fuzz_$target: FINDING (see $log)"; tail -40 "$log"; status=1
  fi
done
exit $status

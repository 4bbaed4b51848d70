#!/usr/bin/env bash
# The store traffic of the creation at 1,024 to 131,072 ranks, emulated from one process
# (`pgroups bench --emulate`) against pgroups' store server, for Megatron's plan tp8 cp2
# pp8 dp (its kinds, products and embedding groups included), beside torch's new_group
# loop on the same server (its first 5 groups played, the rest extrapolated), then the
# chart docs/developing/scale.md shows. docs/developing/scale.md holds the table.
#
#   scripts/emulate-scale.sh [BUILD] [OUT.jsonl]   # about two minutes on 2 cores
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-/tmp/pgroups-emulate-scale.jsonl}
pgroups=$build/cli/pgroups
megatron=tp,cp,pp,dp,dp-cp,tp-pp,tp-cp,tp-dp-cp,tp-dp,embd,pos_embd
: >"$out"
for ranks in 1024 4096 16384 65536 131072; do
  mesh="tp=8,cp=2,pp=8,dp=$((ranks / 128))"
  for kinds in plain megatron; do
    groups=()
    [[ $kinds == megatron ]] && groups=(--group "$megatron")
    for traffic in nccl gloo loop; do
      # gloo's full mesh puts every pair's address on the store, sum over groups of
      # g (g - 1): 2.6 GB through it at 8,192 ranks of Megatron's kinds (groups of 1,024).
      [[ $traffic == gloo && $ranks -gt 16384 ]] && continue
      [[ $traffic == gloo && $kinds == megatron && $ranks -gt 4096 ]] && continue
      [[ $traffic == loop && $kinds == plain ]] && continue
      args=(--backend "${traffic/loop/gloo}")
      [[ $traffic == loop ]] && args+=(--loop --loop-groups 5)
      line=$(timeout 300 "$pgroups" bench --emulate "$ranks" --mesh "$mesh" "${groups[@]}" "${args[@]}" --format json)
      python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["kinds"] = sys.argv[2]; print(json.dumps(r))' \
        "$line" "$kinds" >>"$out"
      tail -n 1 "$out" | python3 scripts/plot_emulated_scale.py --row
    done
  done
done
.venv/bin/python scripts/plot_emulated_scale.py "$out" docs/images/scale-emulated.svg 2>/dev/null ||
  python3 scripts/plot_emulated_scale.py "$out" docs/images/scale-emulated.svg
echo "results: $out; chart: docs/images/scale-emulated.svg"

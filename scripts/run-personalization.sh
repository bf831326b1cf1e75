#!/usr/bin/env bash
# Runs the personalization experiment grid of docs/personalization.md, one run at a time (each run
# starts its own server, which uses both cores), writing one folder per user with its results,
# chart and summary table (16 sessions each, as in docs/results.md; the command itself defaults to 20).
# Settings come from the environment:
#   USERS="student ta teacher" METHODS="combine opd rl base" SEEDS="1 2 3" SESSIONS=16 OUT=./personalization-runs
# OUT is read relative to the directory you run the script from; results never go into docs/ (the
# figures worth keeping go into docs/results.md, the run files stay with you).
# A run whose result file already exists is skipped, so an interrupted grid continues where it stopped.
set -euo pipefail
users=${USERS:-student ta teacher}
methods=${METHODS:-combine opd rl base}
seeds=${SEEDS:-1 2 3}
sessions=${SESSIONS:-16}
mkdir -p "${OUT:-./personalization-runs}"
out=$(cd "${OUT:-./personalization-runs}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
case "$out/" in
  "$root/docs/"*) echo "OUT=$out is inside docs/: write run output elsewhere (docs/results.md holds the figures)" >&2; exit 2 ;;
esac
cd "$root"
failed=0
for seed in $seeds; do
  for method in $methods; do
    for user in $users; do
      target="$out/$user"
      if [ -f "$target/personalize-$user-$method-seed$seed.json" ]; then
        echo "skip $user $method seed $seed (done)"
        continue
      fi
      echo "run $user $method seed $seed ($sessions sessions) at $(date +%H:%M:%S) into $target"
      # One failed run (its server's data folder is named in the error) must not cost the rest of the grid.
      if ! node dist/cli/main.js eval personalize --user "$user" --method "$method" --seed "$seed" --sessions "$sessions" --out "$target"; then
        echo "FAILED $user $method seed $seed"
        failed=$((failed + 1))
      fi
    done
  done
done
if [ "$failed" -gt 0 ]; then
  echo "$failed run(s) failed"
  exit 1
fi

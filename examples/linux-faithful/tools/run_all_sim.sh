#!/bin/bash
# Simulator runs of examples/linux-faithful/*.toml, seeds 1..5, into $OUT/sim/<case>-seed<k>
# (docs/linux-reference.md: the "sim-before" rows).
set -u
source "$(dirname "$0")/env.sh"
sim() {  # file tag seed [extra args]
  local file=$1 tag=$2 seed=$3; shift 3
  $PY -m ccbench run examples/linux-faithful/$file.toml --out $OUT/sim/$tag-seed$seed --seed $seed "$@" \
    > /dev/null || echo "FAIL $tag seed $seed"
}
for s in 1 2 3 4 5; do
  sim overshoot overshoot $s
  sim overshoot overshoot-15s $s --set 'duration="15s"'
  sim two-equal-cubic two-equal-cubic $s
  for c in cubic newreno; do
    sim rtt-fairness-$c rtt-fairness-$c $s --set 'duration="90s"'
    sim rtt-fairness-$c rtt-fairness-$c-600s $s
  done
done
echo SIMDONE

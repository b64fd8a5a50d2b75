#!/bin/bash
# Real-Linux reference runs of examples/linux-faithful/*.toml (docs/linux-reference.md), one at
# a time: they run in wall-clock time. Needs root and a built ccbench-emu ($CCBENCH_EMU).
# $OUT receives <case>-seed<k>/ run directories with mib.json.
set -u
source "$(dirname "$0")/env.sh"
run() {  # name tag seed [extra args]
  local name=$1 tag=$2 seed=$3; shift 3
  local dir=$OUT/$tag-seed$seed
  echo "=== $(date -Is) $tag seed $seed load: $(cut -d' ' -f1-3 /proc/loadavg)"
  $PY "$TOOLS/emu_with_mib.py" examples/linux-faithful/$name.toml --out $dir --seed $seed "$@"
  echo "=== rc=$? $(date -Is) load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  cut -d' ' -f1-3 /proc/loadavg > $dir/loadavg_after.txt
}
for s in 1 2; do run overshoot overshoot $s; done
for s in 1 2; do run two-equal-cubic two-equal-cubic $s; done
for s in 1 2 3; do run rtt-fairness-cubic rtt-fairness-cubic $s --set 'duration="90s"'; done
for s in 1 2 3; do run rtt-fairness-newreno rtt-fairness-newreno $s --set 'duration="90s"'; done
for s in 1 2 3 4 5; do run overshoot overshoot-15s $s --set 'duration="15s"'; done
echo ALLDONE

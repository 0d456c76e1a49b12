#!/usr/bin/env bash
# The fast tier on a busy machine: every core kept busy by a CPU hog (one busy process per core,
# BUSY_HOGS to choose another count), as on a shared CI runner or a laptop that is doing
# something else. A test that passes on a quiet machine only (a fixed sleep, "the latest row",
# a real-time budget) fails here. The hogs are killed when the run ends, however it ends; the
# run's exit code is the fast tier's.
#   npm run test:busy
#   bash scripts/test-busy.sh bash scripts/test.sh test/integration/http/send-message.test.ts
set -uo pipefail
cd "$(dirname "$0")/.."
count="${BUSY_HOGS:-$(nproc)}"
hogs=()
stop_hogs() {
  if [ "${#hogs[@]}" -gt 0 ]; then kill "${hogs[@]}" 2>/dev/null; fi
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for ((hog = 0; hog < count; hog++)); do
  (while :; do :; done) &
  hogs+=("$!")
done
echo "test-busy: $count CPU hogs running (pids ${hogs[*]})" >&2
if [ "$#" -eq 0 ]; then set -- bash scripts/test-fast.sh; fi
"$@"

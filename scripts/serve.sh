#!/usr/bin/env bash
# THE serve command: builds what the page needs (wasm engine + site) and serves it on
# http://127.0.0.1:8000 (or --port N). Ctrl-C stops it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$TALLY_ROOT"
port=8000
while (($#)); do
  case "$1" in
    --port) [[ $# -ge 2 ]] || { echo "serve: --port needs a value" >&2; exit 2; }; port=$2; shift 2 ;;
    --port=*) port=${1#--port=}; shift ;;
    -h|--help) echo "usage: scripts/serve.sh [--port N]   (default 8000)"; exit 0 ;;
    *) echo "serve: unknown option $1 (usage: scripts/serve.sh [--port N])" >&2; exit 2 ;;
  esac
done
[[ $port =~ ^[0-9]{1,5}$ ]] && ((10#$port >= 1 && 10#$port <= 65535)) || { echo "serve: --port must be a whole decimal number in [1, 65535], got \"$port\"" >&2; exit 2; }
ensure_apt_packages cmake ninja-build emscripten nodejs npm
ensure_node_modules
build_wasm
build_site
exec node scripts/dev/static-server.mjs build/site --port "$port"

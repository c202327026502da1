# Shared steps of scripts/test.sh and scripts/serve.sh: install what is missing, build incrementally.
# Sourced, not run. Every step is idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail

TALLY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NODE_PATH=/usr/share/nodejs   # em++'s optimizer finds acorn here (Debian's emscripten)

# Each phase's heading carries the seconds since the script started, so a log shows where the time went.
log() { printf '\n== %s [%ss]\n' "$*" "$SECONDS"; }

# Debian packages the project needs; installed only when one is missing.
TALLY_APT_PACKAGES=(cmake ninja-build ccache g++ clang clang-16 lld-16 emscripten catch2 nlohmann-json3-dev chromium libopenblas-dev nodejs npm hugo)

ensure_apt_packages() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  # nodejs/npm may come from outside Debian (node 20 preinstalled): accept working commands.
  local wanted=()
  for package in "${missing[@]}"; do
    case "$package" in
      nodejs) command -v node >/dev/null || wanted+=("$package") ;;
      npm) command -v npm >/dev/null || wanted+=("$package") ;;
      *) wanted+=("$package") ;;
    esac
  done
  if ((${#wanted[@]})); then
    log "installing Debian packages: ${wanted[*]}"
    local sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
  fi
}

ensure_node_modules() {
  # npm ci against the committed lock file, only when node_modules was not installed from this very lock. A
  # finished install is kept, as hard links, in a cache folder outside the tree keyed by the lock's hash
  # ($TALLY_NODE_CACHE, default ~/.cache/tally); a fresh clone with the same lock links it back in seconds
  # instead of unpacking 1.2 GB again (npm ci: about a minute on 2 cores). Nothing in the tree edits a file of
  # node_modules in place, which is what hard links would share.
  local lock="$TALLY_ROOT/package-lock.json" stamp="$TALLY_ROOT/node_modules/.tally-package-lock.json"
  cmp -s "$lock" "$stamp" && return 0
  local key cache
  key=$(sha256sum "$lock" | cut -c1-16)
  cache="${TALLY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tally}/node_modules-$key"
  if [[ -f $cache/.tally-package-lock.json ]] && cmp -s "$lock" "$cache/.tally-package-lock.json"; then
    log "node_modules (hard links from $cache)"
    rm -rf "$TALLY_ROOT/node_modules"
    if cp -al "$cache" "$TALLY_ROOT/node_modules"; then return 0; fi
    rm -rf "$TALLY_ROOT/node_modules"
  fi
  log "npm ci"
  (cd "$TALLY_ROOT" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$lock" "$stamp"
  # Kept for the next clone; written beside the cache and renamed, so a half-copied cache is never used.
  mkdir -p "$(dirname "$cache")"
  if [[ ! -d $cache ]] && cp -al "$TALLY_ROOT/node_modules" "$cache.tmp.$$" 2>/dev/null; then
    mv -T "$cache.tmp.$$" "$cache" 2>/dev/null || rm -rf "$cache.tmp.$$"
  else
    rm -rf "$cache.tmp.$$"
  fi
}

# ccache, when installed, caches both builds' objects (its own default cache folder, or $CCACHE_DIR). The base
# folder is the tree, so a fresh clone anywhere hits what an earlier clone compiled: no object but
# tests/engine/test_paths.cpp and engine/tools/float_golden_path.cpp holds a path of the tree (their CMakeLists.txt).
# A build folder configured before is kept as it was configured.
TALLY_LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$TALLY_ROOT}"
  TALLY_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# The CUDA host-check programs (native, when nvcc is found) go through it too; the wasm build has no CUDA.
TALLY_NATIVE_LAUNCHER=("${TALLY_LAUNCHER[@]}")
((${#TALLY_LAUNCHER[@]})) && TALLY_NATIVE_LAUNCHER+=(-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

build_native() {
  log "native build (build/native)"
  [[ -f "$TALLY_ROOT/build/native/build.ninja" ]] ||
    cmake -S "$TALLY_ROOT" -B "$TALLY_ROOT/build/native" -G Ninja -DCMAKE_BUILD_TYPE=Release "${TALLY_NATIVE_LAUNCHER[@]}"
  cmake --build "$TALLY_ROOT/build/native" -j"$(nproc)"
}

build_wasm() {
  log "wasm build (build/wasm)"
  [[ -f "$TALLY_ROOT/build/wasm/build.ninja" ]] ||
    emcmake cmake -S "$TALLY_ROOT" -B "$TALLY_ROOT/build/wasm" -G Ninja -DCMAKE_BUILD_TYPE=Release "${TALLY_LAUNCHER[@]}"
  cmake --build "$TALLY_ROOT/build/wasm" -j"$(nproc)"
}

build_site() {
  log "site (build/site)"
  node "$TALLY_ROOT/scripts/build/build-site.mjs" --wasm "$TALLY_ROOT/build/wasm" --out "$TALLY_ROOT/build/site"
}

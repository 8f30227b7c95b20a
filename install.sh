#!/usr/bin/env bash
# Install the service: Bun (if missing), dependencies, build, copy the binary.
#   ./install.sh                    # -> ~/.local/bin/service
#   PREFIX=/usr/local/bin ./install.sh
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

step() { printf '==> %s\n' "$*"; }

ensure_bun() {
  if command -v bun >/dev/null 2>&1 && bun --version >/dev/null 2>&1; then return; fi
  command -v npm >/dev/null 2>&1 || { echo "install.sh: bun is missing and so is npm; install Node.js/npm or Bun first" >&2; exit 1; }
  step "installing Bun from the npm registry (npm install -g bun)"
  # npm 11 asks for install scripts to be approved; bun needs its postinstall to fetch its binary.
  if ! npm install -g --allow-scripts=bun bun; then
    step "global npm install failed; trying --prefix $HOME/.local"
    npm install -g --prefix "$HOME/.local" --allow-scripts=bun bun
  fi
  export PATH="$(npm prefix -g)/bin:$HOME/.local/bin:$PATH"
  if ! bun --version >/dev/null 2>&1; then # postinstall blocked (ignore-scripts): run it by hand
    for dir in "$(npm root -g)/bun" "$HOME/.local/lib/node_modules/bun"; do
      [[ -f "$dir/install.js" ]] && (cd "$dir" && node install.js) && break
    done
  fi
  bun --version >/dev/null 2>&1 || { echo "install.sh: bun still does not run after npm install" >&2; exit 1; }
}

ensure_bun
step "bun $(bun --version)"

if [[ -f bun.lock || -f bun.lockb ]]; then
  step "bun install --frozen-lockfile"; bun install --frozen-lockfile
else
  step "bun install"; bun install
fi

step "bun run build"
bun run build

dest_dir="${PREFIX:-$HOME/.local/bin}"
dest="$dest_dir/service"
mkdir -p "$dest_dir"
# copy then rename, so a running service binary is replaced rather than overwritten in place
cp dist/service "$dest.tmp.$$"
chmod 755 "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
step "installed $dest ($(timeout 10 "$dest" --version 2>/dev/null || echo "version unknown"))"

case ":$PATH:" in
  *":$dest_dir:"*) ;;
  *) echo "note: $dest_dir is not on your PATH; add it, e.g.: export PATH=\"$dest_dir:\$PATH\"" ;;
esac

#!/bin/sh
# Install the service binary for this machine.
#
#   ./install.sh                               # in a release folder: the binary for this machine;
#                                              # in a checkout: the one in dist/release (bun run
#                                              # build:release) if there is one, else build from
#                                              # source (Bun, bun run build)
#   SERVICE_RELEASE_URL=https://…/v0.1.0 ./install.sh   # download service-<platform> and its .sha256
#   SERVICE_RELEASE_URL=/path/to/release ./install.sh   # or take them from a directory
#   PREFIX=/usr/local/bin ./install.sh         # where it goes (default ~/.local/bin)
#   SERVICE_PLATFORM=linux-x64-musl ./install.sh         # pick the platform yourself
#
# Platforms: linux-x64 (glibc), linux-arm64 (glibc: Raspberry Pi OS 64-bit, Debian, Ubuntu),
# linux-x64-musl (Alpine). A release binary is installed only once its SHA-256 matches the
# checksum file published beside it. POSIX sh: it runs on Alpine's BusyBox too.
set -eu
called_from=$(pwd)
cd "$(dirname "$(readlink -f "$0")")"

step() { printf '==> %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

# gnu or musl: what ldd says it is, else whether only musl's loader is there
libc_of() {
  case "$(ldd --version 2>&1 || true)" in
    *musl*) echo musl; return ;;
    *GLIBC* | *"GNU libc"*) echo gnu; return ;;
  esac
  if ls /lib/ld-musl-*.so.1 >/dev/null 2>&1 && ! ls /lib*/ld-linux-*.so.* >/dev/null 2>&1; then echo musl; else echo gnu; fi
}

# linux-x64, linux-arm64 or linux-x64-musl, from the kernel's machine name and the C library
detect_platform() {
  [ "$(uname -s)" = Linux ] || die "only Linux is supported (this is $(uname -s))"
  arch="" libc=""
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    armv7* | armv6* | armhf) die "32-bit ARM ($(uname -m)) is not supported: install a 64-bit OS (Raspberry Pi OS 64-bit) on a Pi 3, 4 or 5" ;;
    *) die "no binary for $(uname -m)" ;;
  esac
  [ "$(libc_of)" = gnu ] || libc=-musl
  [ "$arch$libc" != arm64-musl ] || die "no binary for arm64 with musl (Alpine on ARM): build from source with Bun"
  echo "linux-$arch$libc"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | cut -d' ' -f1
  else die "neither sha256sum nor shasum is installed: cannot check the download"; fi
}

# copies or downloads <source>/<name> to <dest>
fetch() {
  src=$1 name=$2 dest=$3
  case "$src" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then curl -fsSL "$src/$name" -o "$dest" || die "could not download $src/$name"
      elif command -v wget >/dev/null 2>&1; then wget -q "$src/$name" -O "$dest" || die "could not download $src/$name"
      else die "curl or wget is needed to download $src/$name"; fi ;;
    *) [ -f "$src/$name" ] || die "$src/$name does not exist"; cp "$src/$name" "$dest" ;;
  esac
}

# fetches service-<platform> and its checksum file into $tmp and checks them
fetch_verified() {
  from=${1%/} platform=$2
  fetch "$from" "service-$platform" "$tmp/service"
  fetch "$from" "service-$platform.sha256" "$tmp/service.sha256"
  want=$(cut -d' ' -f1 <"$tmp/service.sha256")
  printf '%s' "$want" | grep -Eq '^[0-9a-f]{64}$' || die "service-$platform.sha256 holds no SHA-256"
  got=$(sha256_of "$tmp/service")
  [ "$got" = "$want" ] || die "service-$platform does not match its checksum (got $got, expected $want): nothing was installed"
}

ensure_bun() {
  if command -v bun >/dev/null 2>&1 && bun --version >/dev/null 2>&1; then return; fi
  command -v npm >/dev/null 2>&1 || die "bun is missing and so is npm; install Node.js/npm or Bun first"
  step "installing Bun from the npm registry (npm install -g bun)"
  # npm 11 asks for install scripts to be approved; bun needs its postinstall to fetch its binary.
  if ! npm install -g --allow-scripts=bun bun; then
    step "global npm install failed; trying --prefix $HOME/.local"
    npm install -g --prefix "$HOME/.local" --allow-scripts=bun bun
  fi
  export PATH="$(npm prefix -g)/bin:$HOME/.local/bin:$PATH"
  if ! bun --version >/dev/null 2>&1; then # postinstall blocked (ignore-scripts): run it by hand
    for dir in "$(npm root -g)/bun" "$HOME/.local/lib/node_modules/bun"; do
      [ -f "$dir/install.js" ] && (cd "$dir" && node install.js) && break
    done
  fi
  bun --version >/dev/null 2>&1 || die "bun still does not run after npm install"
}

build_from_source() {
  ensure_bun
  step "bun $(bun --version)"
  if [ -f bun.lock ] || [ -f bun.lockb ]; then
    step "bun install --frozen-lockfile"; bun install --frozen-lockfile
  else
    step "bun install"; bun install
  fi
  step "bun run build"
  bun run build
}

platform=${SERVICE_PLATFORM:-$(detect_platform)}
case "$platform" in linux-x64 | linux-arm64 | linux-x64-musl) ;; *) die "unknown platform $platform (linux-x64, linux-arm64 or linux-x64-musl)" ;; esac
step "platform $platform"

source=${SERVICE_RELEASE_URL:-}
case "$source" in "" | /* | http://* | https://*) ;; *) source=$called_from/$source ;; esac
# beside the binaries (a release folder), or a checkout that built them (bun run build:release)
if [ -z "$source" ] && [ -f "service-$platform" ]; then source=.; fi
if [ -z "$source" ] && [ -f "dist/release/service-$platform" ]; then source=dist/release; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$source" ]; then
  step "service-$platform from $source"
  fetch_verified "$source" "$platform"
  binary=$tmp/service
  step "checksum matches service-$platform.sha256"
else
  [ -f package.json ] || die "no release binary given (SERVICE_RELEASE_URL) and no source to build here"
  build_from_source
  binary=dist/service
fi

dest_dir="${PREFIX:-$HOME/.local/bin}"
dest="$dest_dir/service"
mkdir -p "$dest_dir"
# copy then rename, so a running service binary is replaced rather than overwritten in place
cp "$binary" "$dest.tmp.$$"
chmod 755 "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
step "installed $dest ($(timeout 10 "$dest" --version 2>/dev/null || echo "version unknown"))"

# the manual: the README, where the systemd unit's Documentation= points, and the pages of
# docs/ it links to; a page that cannot be had is left out
doc="$HOME/.local/share/doc/service"
install_manual() {
  (fetch "$1" README.md "$tmp/README.md") 2>/dev/null || return 0
  mkdir -p "$doc/docs" && cp "$tmp/README.md" "$doc/README.md"
  for page in $(grep -o 'docs/[a-z-]*\.md' "$tmp/README.md" | sort -u); do
    if (fetch "$1" "$page" "$tmp/page.md") 2>/dev/null; then cp "$tmp/page.md" "$doc/$page"; fi
  done
}
if [ -f README.md ]; then install_manual .
elif [ -n "$source" ]; then install_manual "$source"; fi

case ":$PATH:" in
  *":$dest_dir:"*) ;;
  *) echo "note: $dest_dir is not on your PATH; add it, e.g.: export PATH=\"$dest_dir:\$PATH\"" ;;
esac

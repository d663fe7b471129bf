#!/usr/bin/env bash
# Builds a benchmark peer (bench/peers/NAME: a Go main module) from the Go module proxy into
# ~/.cache/syncward/peers/NAME-<digest>/, where <digest> is taken over the peer's go.mod, go.sum and
# .go files, so an edited peer is rebuilt and an unchanged one is not. Prints the binary's path on
# stdout. Two builds at once (two benchmark runs) wait for each other under a lock, as the control
# plane's build does, and the binary appears only by an atomic rename.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: build.sh PEER (a folder under bench/peers)}
src="$here/$name"
[ -f "$src/go.mod" ] || { echo "syncward peer build: no Go module in $src" >&2; exit 1; }
command -v go >/dev/null 2>&1 || { echo "syncward peer build: Go is not installed or not on PATH (the $name peer is built from Go modules: install Go >= 1.26)" >&2; exit 1; }
cache=${SYNCWARD_PEER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/syncward/peers}
digest=$(cd "$src" && cat go.mod go.sum $(ls ./*.go ./build-package ./toolchain 2>/dev/null | sort) | sha256sum | cut -c1-16)
# A peer that is a dependency's own program (Argo's agent) names its package in build-package.
pkg=.
[ -f "$src/build-package" ] && pkg=$(cat "$src/build-package")
# A peer whose modules need a newer Go than this machine's names the toolchain (fetched by go itself).
[ -f "$src/toolchain" ] && export GOTOOLCHAIN
[ -f "$src/toolchain" ] && GOTOOLCHAIN=$(cat "$src/toolchain")
dir="$cache/$name-$digest"
bin="$dir/$name-peer"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$dir"
if command -v flock >/dev/null 2>&1; then
  exec {lock_fd}>"$dir.lock"
  if ! flock -n "$lock_fd"; then
    echo "[peer build] $name: another build holds the lock; waiting for it" >&2
    flock "$lock_fd"
  fi
fi
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
echo "[peer build] $name: building from the Go module proxy (first use: a few minutes)" >&2
start=$SECONDS
# -mod=readonly: go.mod and go.sum pin every module; a build never edits the checked-in files.
(cd "$src" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o "$bin.tmp.$$" "$pkg") ||
  { rm -f "$bin.tmp.$$"; echo "syncward peer build: go build of $name failed (see above)" >&2; exit 1; }
mv -f "$bin.tmp.$$" "$bin"
echo "[peer build] $name: built in $((SECONDS - start))s" >&2
echo "$bin"

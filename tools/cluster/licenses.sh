#!/usr/bin/env bash
# The license and notice files of everything compiled into Go binaries (the image's helm and
# kubectl), for the image to carry beside them: for each module `go version -m` lists (the main
# module and each dependency, or its replacement), the LICENSE, LICENCE, COPYING and NOTICE files
# at the module's root go to DEST/<module>@<version>/, and the Go distribution's LICENSE (its
# standard library is compiled in) to DEST/go/. DEST/MODULES lists what each binary holds, and the
# modules that have no such file at their root. Apache-2.0 (helm, kubectl and many of their
# modules) asks a redistribution to carry the license and the NOTICE files; BSD and MIT licenses,
# the copyright notices.
#   bash tools/cluster/licenses.sh DEST BINARY...
# Modules are read from the module cache (the build's), downloaded through the module proxy when
# the cache no longer has them.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: licenses.sh DEST BINARY..." >&2; exit 2; }
dest=$1
shift
command -v go >/dev/null 2>&1 || { echo "licenses.sh: go is not on PATH; it reads the modules each binary holds" >&2; exit 1; }
modcache=$(go env GOMODCACHE)
mkdir -p "$dest"

# The module cache spells each capital letter as '!' and its lower case.
escape() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    if [[ $c == [A-Z] ]]; then out+="!${c,,}"; else out+=$c; fi
  done
  printf '%s' "$out"
}

module_dir() {
  local dir
  dir="$modcache/$(escape "$1")@$2"
  if [ ! -d "$dir" ]; then
    dir=$(go mod download -json "$1@$2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  fi
  [ -d "$dir" ] || { echo "licenses.sh: $1@$2 is not in the module cache and could not be downloaded" >&2; exit 1; }
  printf '%s' "$dir"
}

# One "path version" line per module compiled into $1, a replacement in the stead of what it replaces.
modules() {
  go version -m "$1" | awk -F'\t' '
    $2 == "mod" || $2 == "dep" { if (m != "") print m; m = $3 " " $4 }
    $2 == "=>" { m = ($4 == "" ? "" : $3 " " $4) }
    END { if (m != "") print m }'
}

: >"$dest/MODULES"
without=()
for bin in "$@"; do
  [ -x "$bin" ] || { echo "licenses.sh: $bin is not an executable" >&2; exit 1; }
  gover=$(go version "$bin" | awk '{print $2}')
  printf '%s (%s):\n' "$(basename "$bin")" "$gover" >>"$dest/MODULES"
  mkdir -p "$dest/go"
  cp "$(go env GOROOT)/LICENSE" "$dest/go/LICENSE"
  while read -r path version; do
    printf '  %s@%s\n' "$path" "$version" >>"$dest/MODULES"
    out="$dest/$path@$version"
    [ -d "$out" ] && continue
    src=$(module_dir "$path" "$version")
    mkdir -p "$out"
    found=0
    for f in "$src"/*; do
      case $(basename "$f") in
        *.go) ;; # source (lib/pq has a notice.go)
        LICENSE* | LICENCE* | License* | license* | COPYING* | NOTICE* | Notice* | notice*)
          [ -f "$f" ] && { cp "$f" "$out/"; found=1; } ;;
      esac
    done
    [ $found = 1 ] || { rmdir "$out"; without+=("$path@$version"); }
  done < <(modules "$bin")
done
if [ ${#without[@]} -gt 0 ]; then
  printf 'No license or notice file at the root of: %s\n' "${without[*]}" >>"$dest/MODULES"
fi

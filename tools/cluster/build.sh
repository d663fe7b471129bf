#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and helm from the Go
# module proxy into a cache keyed by version. A component whose binaries are already cached is
# not rebuilt. Each component is built in its own wrapper module so that version selection for
# one never moves another's dependencies. Two builds may run at once (two terminals, `npm test`
# beside `npm run demo`): each component is built under a lock, in a source folder and into
# temporary files of its own process, and a binary appears only by an atomic rename.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${SYNCWARD_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/syncward/cluster}
export CGO_ENABLED=0 GOFLAGS=-mod=mod

fail() {
  echo "syncward cluster build: $1" >&2
  exit 1
}

command -v go >/dev/null 2>&1 || fail "Go is not installed or not on PATH. The local control plane is built from Go modules: install Go >= 1.26 (https://go.dev/doc/install), or point the tests at an existing cluster with SYNCWARD_TEST_KUBECONFIG=/path/to/kubeconfig."

# Components whose go.mod asks for a newer Go than this machine's need the pinned toolchain.
need_toolchain() {
  local want=$1 have
  have=$(go env GOVERSION | sed 's/^go//')
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" != "$want" ]
}

step() { printf '[cluster build] %s\n' "$*" >&2; }

# lock NAME: holds an exclusive lock on NAME until unlock; the second build waits, then finds the
# binaries the first one built. Without flock (macOS) the per-process names below still keep two
# builds from breaking each other; they only both do the work.
lock() {
  mkdir -p "$cache"
  command -v flock >/dev/null 2>&1 || return 0
  exec {lock_fd}>"$cache/$1.lock"
  if ! flock -n "$lock_fd"; then
    step "$1: another build holds the lock; waiting for it"
    flock "$lock_fd"
  fi
}
unlock() { if [ -n "${lock_fd:-}" ]; then exec {lock_fd}>&-; fi; }

# build_component NAME VERSION GOMOD_WRITER PKG:OUT...
build_component() {
  local name=$1 version=$2 writer=$3
  shift 3
  local dir="$cache/$name-$version"
  local bin="$dir/bin"
  local missing=0 spec
  for spec in "$@"; do [ -x "$bin/${spec#*:}" ] || missing=1; done
  if [ $missing = 0 ]; then
    step "$name $version: cached in $bin"
    return
  fi
  lock "$name-$version"
  missing=0
  for spec in "$@"; do [ -x "$bin/${spec#*:}" ] || missing=1; done
  if [ $missing = 0 ]; then
    unlock
    step "$name $version: built by another build, cached in $bin"
    return
  fi
  local src="$dir/src.$$"
  rm -rf "$src" && mkdir -p "$src" "$bin"
  trap 'rm -rf "$src"' EXIT
  step "$name $version: resolving modules"
  (cd "$src" && "$writer" "$version") || fail "$name $version: could not resolve its modules from the Go module proxy (see the go error above). Check GOPROXY ($(go env GOPROXY)) and that $name $version is served."
  for spec in "$@"; do
    local pkg=${spec%%:*} out=${spec#*:}
    step "$name $version: building $out (this is the slow part on first use)"
    local start=$SECONDS
    (cd "$src" && go build -trimpath -ldflags "$(ldflags_for "$name" "$version")" -o "$bin/$out.tmp.$$" "$pkg") ||
      fail "$name $version: go build $pkg failed (see above)."
    mv -f "$bin/$out.tmp.$$" "$bin/$out"
    step "$name $version: built $out in $((SECONDS - start))s"
  done
  rm -rf "$src"
  trap - EXIT
  unlock
}

ldflags_for() {
  local name=$1 version=$2
  case $name in
    kubernetes)
      local minor major
      major=$(echo "$version" | sed -E 's/^v([0-9]+)\..*/\1/')
      minor=$(echo "$version" | sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/')
      local f=""
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        f="$f -X $p.gitVersion=$version -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
      done
      echo "-s -w$f"
      ;;
    kwok) echo "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$version" ;;
    registry) echo "-s -w -X github.com/distribution/distribution/v3/version.version=$version" ;;
    # As helm's own Makefile stamps it; the Kubernetes version its .Capabilities defaults to is the
    # one of the client-go it is built with (syncward passes the destination's own with --kube-version).
    helm)
      local mod k8s
      mod=$(go mod download -json "helm.sh/helm/v3@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
      k8s=$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$mod")
      local p=helm.sh/helm/v3
      echo "-s -w -X $p/internal/version.version=$version -X $p/internal/version.gitTreeState=clean -X $p/pkg/chartutil.k8sVersionMajor=1 -X $p/pkg/chartutil.k8sVersionMinor=$k8s -X $p/pkg/lint/rules.k8sVersionMajor=1 -X $p/pkg/lint/rules.k8sVersionMinor=$k8s"
      ;;
    *) echo "-s -w" ;;
  esac
}

# k8s.io/kubernetes resolves its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 with
# replace => ./staging/..., which only a main module may do. The wrapper replaces each of them with
# the published v0.X.Y. The list is read from the real go.mod, never typed by hand.
write_kubernetes_mod() {
  local version=$1 staging=${1/#v1./v0.}
  local mod
  mod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$mod" ] || return 1
  local gover
  gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$mod")
  if need_toolchain "$gover"; then export GOTOOLCHAIN=go1.27.3; fi
  {
    echo "module syncward.local/cluster/kubernetes"
    echo
    echo "go $gover"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    echo "replace ("
    sed -n '/^replace (/,/^)/p' "$mod" | sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/.*#\1#p' |
      while read -r m; do echo "	$m => $m $staging"; done
    echo ")"
  } >go.mod
  go mod download k8s.io/kubernetes >/dev/null
}

write_etcd_mod() {
  local version=$1
  printf 'module syncward.local/cluster/etcd\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$version" >go.mod
  go mod download go.etcd.io/etcd/server/v3 >/dev/null
}

write_helm_mod() {
  local version=$1
  printf 'module syncward.local/cluster/helm\n\ngo 1.26\n\nrequire helm.sh/helm/v3 %s\n' "$version" >go.mod
  go mod download helm.sh/helm/v3 >/dev/null
}

# Test-only: an OCI registry (the CNCF distribution registry) for the Helm OCI dependency test, with
# the in-memory storage driver and htpasswd auth only (the upstream main links every cloud driver).
write_registry_mod() {
  local version=$1
  printf 'module syncward.local/cluster/registry\n\ngo 1.26\n\nrequire github.com/distribution/distribution/v3 %s\n' "$version" >go.mod
  cat >main.go <<'GO'
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	// nolint:errcheck
	registry.RootCmd.Execute()
}
GO
  go mod download github.com/distribution/distribution/v3 >/dev/null
}

write_kwok_mod() {
  local version=$1
  printf 'module syncward.local/cluster/kwok\n\ngo 1.26\n\nrequire sigs.k8s.io/kwok %s\n' "$version" >go.mod
  go mod download sigs.k8s.io/kwok >/dev/null
}

# kwok >= 0.8 needs its stage definitions at run time; they ship inside the module.
# Fast stages: nodes become Ready and keep a heartbeat Lease, pods become Ready at once.
write_kwok_stages() {
  local version=$1 out="$cache/kwok-$1/stages.yaml"
  [ -s "$out" ] && return
  lock "kwok-$version-stages"
  if [ -s "$out" ]; then unlock && return; fi
  local dir
  dir=$(go mod download -json "sigs.k8s.io/kwok@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  local stages=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)
  local s
  for s in "${stages[@]}"; do
    [ -f "$dir/kustomize/stage/$s" ] || fail "kwok $version: stage file kustomize/stage/$s is missing from the module"
    cat "$dir/kustomize/stage/$s"
    echo "---"
  done >"$out.tmp.$$"
  mv -f "$out.tmp.$$" "$out"
  unlock
}

components=${*:-etcd kubernetes kwok helm}
# Asking for a subset still prints every path; the plane's driver asks for etcd, kubernetes and kwok,
# the tests and the renderer for helm.
for c in $components; do
  case $c in
    etcd) build_component etcd "$ETCD_VERSION" write_etcd_mod go.etcd.io/etcd/server/v3:etcd ;;
    kubernetes) build_component kubernetes "$KUBERNETES_VERSION" write_kubernetes_mod \
      k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler ;;
    # kubectl is only built where the machine lacks it (CI on a bare machine); kustomize is inside it.
    kubectl) build_component kubernetes "$KUBERNETES_VERSION" write_kubernetes_mod k8s.io/kubernetes/cmd/kubectl:kubectl ;;
    kwok) build_component kwok "$KWOK_VERSION" write_kwok_mod sigs.k8s.io/kwok/cmd/kwok:kwok
      write_kwok_stages "$KWOK_VERSION" ;;
    helm) build_component helm "$HELM_VERSION" write_helm_mod helm.sh/helm/v3/cmd/helm:helm ;;
    registry) build_component registry "$REGISTRY_VERSION" write_registry_mod .:registry ;;
    *) fail "unknown component $c (expected etcd, kubernetes, kwok, helm, registry or kubectl)" ;;
  esac
done
step "all binaries ready under $cache"
# stdout carries only the paths, for the driver to read.
echo "etcd=$cache/etcd-$ETCD_VERSION/bin/etcd"
for b in kube-apiserver kube-controller-manager kube-scheduler; do echo "$b=$cache/kubernetes-$KUBERNETES_VERSION/bin/$b"; done
echo "kwok=$cache/kwok-$KWOK_VERSION/bin/kwok"
echo "kwok-stages=$cache/kwok-$KWOK_VERSION/stages.yaml"
echo "helm=$cache/helm-$HELM_VERSION/bin/helm"
echo "registry=$cache/registry-$REGISTRY_VERSION/bin/registry"
echo "versions=etcd $ETCD_VERSION, kubernetes $KUBERNETES_VERSION, kwok $KWOK_VERSION, helm $HELM_VERSION"

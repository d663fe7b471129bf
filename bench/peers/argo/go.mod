// Argo CD's sync engine as Argo CD itself ships it (github.com/argoproj/argo-cd/gitops-engine/v3)
// and the engine's example agent, built as they are. The module asks for Go 1.27, so
// bench/peers/build.sh builds it with the toolchain named in ./toolchain (from the module proxy).
module syncward.local/bench/peers/argo

go 1.27.0

require github.com/argoproj/argo-cd/gitops-engine/v3 v3.6.1

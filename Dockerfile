# syntax=docker/dockerfile:1
# syncward's production image: the Probot app (TypeScript run through tsx, no build step), git
# for local sources, and kubectl for Kustomize rendering. Build: docker build -t syncward .
#
# Pin the bases by digest in your own build system (node:20-bookworm-slim@sha256:...) if you
# need reproducible images; the tags below follow patch releases.
ARG NODE_IMAGE=node:20-bookworm-slim
ARG GO_IMAGE=golang:1.26-bookworm
ARG KUBECTL_VERSION=v1.37.2

# --- kubectl ---------------------------------------------------------------------------------
# Built from source through the Go module proxy rather than downloaded as a binary, because:
# every module is verified against go.sum and the public checksum database (sum.golang.org), so
# the result is as verifiable as a signed download; the Go module proxy is reachable from build
# systems that allow package registries only (ours does); and it is the same recipe the local
# control plane uses (tools/cluster/build.sh). Prebuilt alternatives work too, e.g. the
# checksummed release binary from dl.k8s.io (verify it with its .sha256 file).
#
# `go install k8s.io/kubernetes/cmd/kubectl@...` is refused (k8s.io/kubernetes resolves its
# staging modules with replace directives). kubectl's main package is a few lines over the
# published k8s.io/kubectl module, so it is taken verbatim from the checksummed k8s.io/kubernetes
# module and built in a small wrapper module against k8s.io/kubectl v0.X.Y (= v1.X.Y).
FROM ${GO_IMAGE} AS kubectl
ARG KUBECTL_VERSION
ENV CGO_ENABLED=0 GOFLAGS=-mod=mod
WORKDIR /build
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    set -eux; \
    staging="v0.${KUBECTL_VERSION#v1.}"; \
    major=1; minor="$(echo "$KUBECTL_VERSION" | cut -d. -f2)"; \
    dir="$(go mod download -json "k8s.io/kubernetes@${KUBECTL_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"; \
    cp "$dir/cmd/kubectl/kubectl.go" .; \
    go mod init syncward.local/kubectl; \
    go get "k8s.io/kubectl@${staging}" "k8s.io/component-base@${staging}" "k8s.io/client-go@${staging}"; \
    go mod tidy; \
    ldflags="-s -w"; \
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do \
      ldflags="$ldflags -X $p.gitVersion=${KUBECTL_VERSION} -X $p.gitMajor=${major} -X $p.gitMinor=${minor} -X $p.gitTreeState=clean"; \
    done; \
    go build -trimpath -ldflags "$ldflags" -o /out/kubectl .; \
    /out/kubectl version --client

# --- production dependencies ---------------------------------------------------------------
# tsx is a runtime dependency (TypeScript is run, not compiled), so --omit=dev is enough.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund

# --- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="syncward" \
      org.opencontainers.image.description="GitOps delivery bot for GitHub (Probot app)" \
      org.opencontainers.image.licenses="Apache-2.0"

# git: local-git sources and the CLI. tini: PID 1 that forwards SIGTERM to node (a bare node as
# PID 1 ignores it, and Kubernetes would wait out the grace period and SIGKILL).
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates git tini; \
    rm -rf /var/lib/apt/lists/*; \
    groupadd --gid 10001 syncward; \
    useradd --uid 10001 --gid 10001 --home-dir /home/syncward --create-home --shell /usr/sbin/nologin syncward; \
    mkdir -p /var/cache/syncward; \
    chown 10001:10001 /var/cache/syncward

COPY --from=kubectl /out/kubectl /usr/local/bin/kubectl

WORKDIR /app
# Code and dependencies stay owned by root: the app cannot modify itself.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json app.yml ./
COPY bin ./bin
COPY schema ./schema
COPY src ./src

# HOST: Probot listens on localhost unless told otherwise. LOG_FORMAT: `probot run` logs
# pretty text unless told otherwise, even with NODE_ENV=production. Caches go to /var/cache/syncward (an
# emptyDir in deploy/, since the root filesystem is read-only there) and temporary files to /tmp.
ENV NODE_ENV=production \
    LOG_FORMAT=json \
    HOST=0.0.0.0 \
    PORT=3000 \
    XDG_CACHE_HOME=/var/cache/syncward \
    SYNCWARD_TREE_CACHE=/var/cache/syncward/trees

USER 10001:10001
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
# `probot run` in this process with tsx loaded (Node 20 cannot import .ts on its own). The CLI is
# available too: docker run --rm syncward node bin/syncward.js app list ...
CMD ["node", "--import", "tsx", "node_modules/probot/bin/probot.js", "run", "./src/github/app.ts"]

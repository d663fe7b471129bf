# syntax=docker/dockerfile:1
# syncward's production image: the compiled GitHub App (dist/, no TypeScript at run time) on Node 24
# LTS, git for local sources, kubectl for Kustomize rendering and helm for Helm sources.
#   docker build --build-arg SYNCWARD_COMMIT="$(git rev-parse HEAD)" -t syncward .
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 ... (helm and kubectl are
# cross-compiled for the target; nothing downloaded is architecture-specific).
#
# The bases are pinned to exact version tags. Pinning them by digest as well
# (node:<version>-bookworm-slim@sha256:...) belongs to the release pipeline that pushes the image:
# it resolves and records the digest it built from. No machine that develops syncward reaches the
# registry, so no digest is written here that nobody could check.
#
# What is downloaded while building, and what verifies it:
#   helm, kubectl   Go modules, at the versions of tools/cluster/versions.env, the same file the
#                   local control plane and the tests build from: the two main modules against the
#                   sums recorded there, every module against sum.golang.org (go.sum checking).
#   npm packages    package-lock.json's integrity hashes (npm ci).
#   Debian packages the archive's signed Release files (apt).
# No machine that develops syncward reaches get.helm.sh or dl.k8s.io, so no checksum of their
# release archives could be recorded and checked here; helm and kubectl are built from source
# instead, exactly as tools/cluster/build.sh builds them for the tests.
#
# CI cannot run a container engine either: tools/image-layout.ts assembles the runtime stage's
# files (below) from the same versions and runs the CLI, the app and a Helm render from them with
# PATH limited to what the image holds, and checks that syncward's LICENSE and the license files
# of every module compiled into helm and kubectl are there. What only a real `docker build` proves:
# that this file builds (the Go builds, apt, npm ci, licenses.sh in the image), the Debian packages
# (git, tini, ca-certificates) and their versions, the binaries' architecture on arm64, file
# ownership and USER, HEALTHCHECK and the ENTRYPOINT's signal handling.

# The Node version is IMAGE_NODE_VERSION of tools/cluster/versions.env (CI runs the tests on it;
# tools/image-layout.ts and test/unit/dockerfile.test.ts fail when the two differ).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG GO_IMAGE=golang:1.26.8-bookworm

# --- helm and kubectl -------------------------------------------------------------------------
# Built on the build machine's platform for the target's (CGO off: static binaries).
FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS tools
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /src
COPY tools/cluster/versions.env tools/cluster/build.sh tools/cluster/licenses.sh ./tools/cluster/
# GOFLAGS=-mod=mod: build.sh's wrapper modules start without a go.sum, and each module it adds is
# checked against the checksum database (GOSUMDB), never trusted on first use (GONOSUMDB,
# GOPRIVATE, GOINSECURE empty; GOFLAGS carries no -insecure).
ENV GOPROXY=https://proxy.golang.org GOSUMDB=sum.golang.org GONOSUMDB= GOPRIVATE= GOINSECURE= \
    GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -eux; \
    . tools/cluster/versions.env; \
    sum_of() { go mod download -json "$1" | sed -n 's/.*"Sum": "\(.*\)".*/\1/p'; }; \
    test "$(sum_of "helm.sh/helm/v3@${HELM_VERSION}")" = "${HELM_MODULE_SUM}"; \
    test "$(sum_of "k8s.io/kubernetes@${KUBERNETES_VERSION}")" = "${KUBERNETES_MODULE_SUM}"; \
    GOOS="${TARGETOS}" GOARCH="${TARGETARCH}" SYNCWARD_CLUSTER_CACHE=/out \
      bash tools/cluster/build.sh helm kubectl >/dev/null; \
    install -D -m 0755 "/out/helm-${HELM_VERSION}/bin/helm" /tools/helm; \
    install -D -m 0755 "/out/kubernetes-${KUBERNETES_VERSION}/bin/kubectl" /tools/kubectl; \
    bash tools/cluster/licenses.sh /tools/licenses /tools/helm /tools/kubectl

# --- build: TypeScript -> dist/ ---------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency's install script runs (and `prepare` waits for the sources).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY tools/build.mjs ./tools/
COPY src ./src
ARG SYNCWARD_COMMIT=unknown
RUN SYNCWARD_COMMIT="${SYNCWARD_COMMIT}" npm run build

# --- production dependencies ------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ----------------------------------------------------------------------------------
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

COPY --from=tools /tools/helm /usr/local/bin/helm
COPY --from=tools /tools/kubectl /usr/local/bin/kubectl
# The license and NOTICE files of every module compiled into them, and Go's (MODULES lists them).
COPY --from=tools /tools/licenses /usr/local/share/doc/helm-kubectl
# The binaries run on the target platform (under emulation when cross-building).
RUN helm version --short && kubectl version --client

WORKDIR /app
# Code and dependencies stay owned by root: the app cannot modify itself.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# syncward's license. No NOTICE: syncward has no attribution notices of its own, and none of the
# npm packages the image carries ships a NOTICE file (each keeps its own license in node_modules).
COPY package.json package-lock.json app.yml LICENSE ./
COPY bin ./bin
COPY schema ./schema

# HOST: Probot listens on localhost unless told otherwise. LOG_FORMAT: JSON lines even on a
# terminal (`docker run -t`). Caches go to /var/cache/syncward (an emptyDir in deploy/, since the
# root filesystem is read-only there) and temporary files to /tmp.
# MALLOC_ARENA_MAX: glibc keeps one malloc arena per thread that touched the heap; two arenas keep
# the RSS left after a large initial sync lower (docs/benchmarks-log.md, operability: 231 -> 196 MB).
# NODE_OPTIONS (docs/benchmarks-log.md, controller memory; the memory benchmark runs with it): --expose-gc
# lets the process give the pages of a burst back once it is over (src/util/release-memory.ts).
# (--max-semi-space-size was measured too: it lowers the peak during a sync, not the memory after
# it, for about 6% more CPU, so it is not set.)
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    NODE_OPTIONS="--expose-gc" \
    LOG_FORMAT=json \
    HOST=0.0.0.0 \
    PORT=3000 \
    XDG_CACHE_HOME=/var/cache/syncward \
    SYNCWARD_TREE_CACHE=/var/cache/syncward/trees \
    SYNCWARD_HELM=/usr/local/bin/helm

USER 10001:10001
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
# The compiled app with syncward's logger. The CLI is here too:
#   docker run --rm syncward node bin/syncward.js app list ...
CMD ["node", "dist/github/server.js"]

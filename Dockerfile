# syntax=docker/dockerfile:1
# syncward's production image: the compiled GitHub App (dist/, no TypeScript at run time) on Node 24
# LTS, git for local sources, and kubectl for Kustomize rendering.
#   docker build --build-arg SYNCWARD_COMMIT="$(git rev-parse HEAD)" -t syncward .
#
# The bases are pinned to exact version tags. Pinning them by digest as well
# (node:24.21.0-bookworm-slim@sha256:...) belongs to the release pipeline that pushes the image:
# it resolves and records the digest it built from. No machine that develops syncward reaches the
# registry, so no digest is written here that nobody could check.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG KUBECTL_VERSION=v1.37.2

# --- kubectl ----------------------------------------------------------------------------------
# The release binary from dl.k8s.io, verified against the .sha256 file published beside it.
FROM ${NODE_IMAGE} AS kubectl
ARG KUBECTL_VERSION
ARG TARGETARCH=amd64
RUN set -eux; \
    base="https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl"; \
    node -e 'const [u, f] = process.argv.slice(1); fetch(u).then(async (r) => { if (!r.ok) throw new Error(`${u}: ${r.status}`); require("fs").writeFileSync(f, Buffer.from(await r.arrayBuffer())); })' "$base" /tmp/kubectl; \
    node -e 'const [u, f] = process.argv.slice(1); fetch(u).then(async (r) => { if (!r.ok) throw new Error(`${u}: ${r.status}`); require("fs").writeFileSync(f, await r.text()); })' "$base.sha256" /tmp/kubectl.sha256; \
    echo "$(cat /tmp/kubectl.sha256)  /tmp/kubectl" | sha256sum -c -; \
    install -m 0755 /tmp/kubectl /usr/local/bin/kubectl; \
    kubectl version --client

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

COPY --from=kubectl /usr/local/bin/kubectl /usr/local/bin/kubectl

WORKDIR /app
# Code and dependencies stay owned by root: the app cannot modify itself.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json app.yml ./
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
    SYNCWARD_TREE_CACHE=/var/cache/syncward/trees

USER 10001:10001
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
# The compiled app with syncward's logger. The CLI is here too:
#   docker run --rm syncward node bin/syncward.js app list ...
CMD ["node", "dist/github/server.js"]

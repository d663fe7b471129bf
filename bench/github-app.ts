// The Probot app as GitHub sees it, for benchmarks 4 and 7: a real HTTP server running Probot's own
// webhook middleware (signature checked), GitHub's API mocked with nock (every request validated
// against GitHub's OpenAPI description, test/support/github.ts), a real git repository served as
// GitHub's tarball, and the real local cluster. One environment, automated sync, one ConfigMap
// that every push changes, so every push makes a sync with one write.
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { createNodeMiddleware, Probot } from "probot";
import { type SyncwardApp, syncwardApp } from "../src/github/app.ts";
import type { ReconcilerEvent } from "../src/reconciler/events.ts";
import { mockConfig } from "../test/support/app.ts";
import { makeRepo, type TestRepo } from "../test/support/git-repo.ts";
import { type GitHubMock, mockGitHub, type SeenRequest, TestOctokit } from "../test/support/github.ts";
import { pushEvent } from "../test/support/webhooks.ts";
import { emitTo, nextEvent } from "./reconciler-events.ts";
import { type BenchContext, client, Namespaces } from "./support.ts";

const SECRET = "bench-webhook-secret";
const REPO = "/repos/acme/shop";
const CODELOAD = "https://codeload.github.com";

const configMap = (release: number) => `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {release: "${release}"}
`;

export interface PushRun {
  revision: string;
  /** Request sent -> the reconciler's syncStarted event (after fetch, render, read and plan; before the first write). */
  syncStartMs: number;
  /** Request sent -> the middleware's HTTP response. */
  responseMs: number;
  status: number;
  phase: string;
  /** Requests GitHub's mock saw from this push's delivery until the app was idle again. */
  requests: SeenRequest[];
}

export interface BenchApp {
  push(index: number): Promise<PushRun>;
  close(): Promise<void>;
}

function mockGitHubForPushes(mock: GitHubMock, config: string, tarballs: Map<string, Buffer>): void {
  let ids = 1000;
  mockConfig(mock, config);
  mock.api
    .get(/\/repos\/acme\/shop\/tarball\/[0-9a-f]{40}$/)
    .reply(function () {
      return [
        302,
        "",
        { location: `${CODELOAD}/acme/shop/legacy.tar.gz/${this.req.path.split("/").at(-1)}` },
      ];
    })
    .persist();
  mock
    .scope(CODELOAD)
    .get(/\/acme\/shop\/legacy\.tar\.gz\/[0-9a-f]{40}$/)
    .reply(200, (uri) => tarballs.get(uri.split("/").at(-1) ?? "") ?? Buffer.alloc(0), {
      "content-type": "application/x-gzip",
    })
    .persist();
  mock.api.get(`${REPO}/deployments`).query(true).reply(200, []).persist();
  mock.api
    .post(`${REPO}/deployments`)
    .reply(201, (_uri, body) => ({ id: ++ids, ...(body as object) }))
    .persist();
  mock.api
    .post(/\/repos\/acme\/shop\/deployments\/\d+\/statuses$/)
    .reply(201, { id: 1, state: "success" })
    .persist();
  mock.api
    .post(`${REPO}/check-runs`)
    .reply(201, () => ({ id: ++ids, html_url: `https://github.com/acme/shop/runs/${ids}` }))
    .persist();
  mock.api
    .patch(/\/repos\/acme\/shop\/check-runs\/\d+$/)
    .reply(200, { id: 1 })
    .persist();
}

function deliver(port: number, name: string, id: string, body: string): Promise<number> {
  const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/github/webhooks",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "x-github-event": name,
          "x-github-delivery": id,
          "x-hub-signature-256": signature,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The app of benchmark 4 with `environments` automated environments tracking the same path. */
export async function startBenchApp(ctx: BenchContext, environments = 1): Promise<BenchApp> {
  const kube = client(ctx);
  const namespaces = new Namespaces(kube, "bench-gh");
  const appNamespaces: string[] = [];
  for (let i = 0; i < environments; i++) appNamespaces.push(await namespaces.create(`app${i}`));
  const stateNs = await namespaces.create("state");
  const repo: TestRepo = makeRepo({ "deploy/settings.yaml": configMap(0) });
  const cacheDir = mkdtempSync(join(tmpdir(), "syncward-bench-gh-trees-"));
  const config = `environments:\n${appNamespaces
    .map(
      (ns, i) => `  - name: dev${i === 0 ? "" : i + 1}
    source: {path: deploy}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
`,
    )
    .join("")}`;
  const tarballs = new Map<string, Buffer>();
  const mock = mockGitHub();
  mockGitHubForPushes(mock, config, tarballs);
  const listeners = new Set<(e: ReconcilerEvent) => void>();
  const next = (match: (e: ReconcilerEvent) => boolean) => nextEvent(listeners, match, 60_000);
  let parts: SyncwardApp | undefined;
  const appFn = syncwardApp(
    {
      client: kube,
      stateNamespace: stateNs,
      cacheDir,
      identity: "bench",
      leases: false,
      watch: false,
      pollIntervalMs: 0,
      autoStart: false,
      log: pino({ level: "silent" }),
      onEvent: emitTo(listeners),
    },
    (p) => {
      parts = p;
    },
  );
  const probot = new Probot({ githubToken: "test", Octokit: TestOctokit, secret: SECRET, logLevel: "warn" });
  const middleware = await createNodeMiddleware(appFn, { probot });
  const server: Server = createServer((req, res) => {
    void middleware(req, res, () => {
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const idle = async () => {
    for (let i = 0; i < 3; i++) {
      for (const rt of parts?.runtimes.all() ?? []) {
        await Promise.all(rt.reconciler.environments.map((c) => c.idle()));
        await rt.reporter.idle();
      }
    }
  };
  let previous = repo.head();

  return {
    async push(index) {
      const sha = repo.commit({ "deploy/settings.yaml": configMap(index + 1) }, `release ${index + 1}`);
      tarballs.set(
        sha,
        execFileSync("git", ["archive", "--format=tar.gz", `--prefix=acme-shop-${sha.slice(0, 7)}/`, sha], {
          cwd: repo.dir,
        }),
      );
      const event = pushEvent({
        after: sha,
        before: previous,
        modified: ["deploy/settings.yaml"],
        sender: { login: "alice" },
      });
      previous = sha;
      const body = JSON.stringify(event.payload);
      const seenBefore = mock.requests.length;
      const started = next((e) => e.type === "syncStarted" && e.revision === sha);
      const synced = next((e) => e.type === "synced" && e.revision === sha);
      const start = performance.now();
      const response = deliver(port, "push", event.id, body).then((status) => ({
        status,
        at: performance.now(),
      }));
      const [{ at }, answered, done] = await Promise.all([started, response, synced]);
      await idle();
      return {
        revision: sha,
        syncStartMs: at - start,
        responseMs: answered.at - start,
        status: answered.status,
        phase: done.event.type === "synced" ? done.event.outcome.phase : "unknown",
        requests: mock.requests.slice(seenBefore),
      };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await parts?.runtimes.stop();
      mock.reset();
      await namespaces.removeAll();
      kube.close();
      rmSync(repo.dir, { recursive: true, force: true });
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}

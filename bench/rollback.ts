// Opt-in benchmark `rollback`: how soon a `/rollback` comment puts an earlier render back on the
// cluster, and `/unpin` the branch head. The app runs in this process with GitHub mocked
// (test/support's FakeGitHub behind nock, every request checked against GitHub's OpenAPI
// description) on the real plane; one environment (automated, prune) of 50 ConfigMaps, deployed at
// an old commit and then at the head, every object different between them. Each trial comments
// `/rollback dev <old commit>` and times from the webhook handed to the app to the moment a watch
// of its own on the API server has seen all 50 objects at the old render; then `/unpin dev`, to
// all 50 at the head again. The first write's arrival splits each time into what comes before it
// (GitHub, the state, the render, the plan and the server-side dry runs) and the writes; the same
// 50 changes sent raw (dry runs, then applies, all in flight at once) show the API server's part.
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import type { KubeClient } from "../src/kube/client.ts";
import type { KubeObject } from "../src/kube/object.ts";
import { startApp, type TestApp } from "../test/support/app.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { FakeGitHub } from "../test/support/github-fake.ts";
import { issueCommentEvent, pushEvent } from "../test/support/webhooks.ts";
import { keepWatching, nextWake } from "./deployment-observer.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  median,
  medianAndP99,
  Namespaces,
  progress,
} from "./support.ts";

const OBJECTS = 50;
const TRIAL_TIMEOUT_MS = 60_000;

const objects = (version: string, namespace?: string): KubeObject[] =>
  Array.from({ length: OBJECTS }, (_, i) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `cm-${i}`, ...(namespace ? { namespace } : {}) },
    data: { version },
  }));
const files = (version: string) =>
  Object.fromEntries(objects(version).map((o) => [`app/${o.metadata.name}.yaml`, stringify(o)]));

/** Every ConfigMap's `version` in one namespace as a watch of the API server sees it, timestamped. */
class VersionObserver {
  readonly versions = new Map<string, string | undefined>();
  private readonly abort = new AbortController();
  private readonly waiters = new Set<() => void>();
  private running?: Promise<void>;
  /** performance.now() of the last event, and of the first since `mark()`. */
  private last = 0;
  firstSinceMark?: number;

  constructor(
    private readonly kube: KubeClient,
    private readonly namespace: string,
  ) {}

  async start(): Promise<void> {
    const { running } = await keepWatching(
      this.kube,
      "v1",
      "ConfigMap",
      this.namespace,
      this.abort.signal,
      (type, obj) => {
        const name = obj.metadata.name ?? "";
        if (!name.startsWith("cm-")) return;
        const version = (obj as { data?: { version?: string } }).data?.version;
        if (type === "DELETED") this.versions.delete(name);
        else this.versions.set(name, version);
        this.last = performance.now();
        this.firstSinceMark ??= this.last;
        for (const wake of this.waiters) wake();
      },
    );
    this.running = running;
  }

  mark(): void {
    this.firstSinceMark = undefined;
  }

  /** performance.now() of the event after which every object is at `version`. */
  async allAt(version: string): Promise<number> {
    const deadline = performance.now() + TRIAL_TIMEOUT_MS;
    const done = () =>
      this.versions.size === OBJECTS && [...this.versions.values()].every((v) => v === version);
    while (!done()) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`the objects did not all reach ${version} in ${TRIAL_TIMEOUT_MS} ms`);
      await nextWake(this.waiters, left);
    }
    return this.last;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }
}

/** GitHub's answers for comments by a writer: the reactions and the permission, as often as asked. */
function acceptComments(app: TestApp): void {
  app.mock.api
    .post(/\/repos\/acme\/shop\/issues\/comments\/\d+\/reactions$/)
    .reply(201, { id: 1, content: "eyes" })
    .persist();
  app.mock.api
    .get("/repos/acme/shop/collaborators/alice/permission")
    .reply(200, { permission: "write", role_name: "write", user: { login: "alice" } })
    .persist();
}

export async function rollbackLatency(ctx: BenchContext): Promise<BenchResult> {
  const trials = Number(process.env.SYNCWARD_BENCH_ROLLBACK_TRIALS ?? (ctx.quick ? 3 : 10));
  const admin = client(ctx);
  const syncward = client(ctx);
  const namespaces = new Namespaces(admin, "bench-rb");
  const rollback = { total: [] as number[], deciding: [] as number[] };
  const unpin = { total: [] as number[], deciding: [] as number[] };
  /** The same 50 changes as raw server-side apply PATCHes, all in flight at once: the API server's part. */
  const raw: number[] = [];
  /** The same 50 as server-side dry runs (a sync asks one of each write before its first write). */
  const rawDryRun: number[] = [];
  let app: TestApp | undefined;
  let observer: VersionObserver | undefined;
  try {
    const ns = await namespaces.create("dev");
    const stateNamespace = await namespaces.create("state");
    const repo = makeRepo(files("old"));
    const old = repo.head();
    const github = new FakeGitHub(
      repo,
      stringify({
        environments: [
          {
            name: "dev",
            source: { path: "app" },
            destination: { namespace: ns },
            syncPolicy: { automated: { prune: true } },
            revisionHistoryLimit: 100,
          },
        ],
      }),
    );
    app = await startApp({ client: syncward, stateNamespace, autoStart: true });
    github.install(app.mock);
    acceptComments(app);
    const a = app;
    const o = new VersionObserver(admin, ns);
    observer = o;
    await o.start();
    await a.probot.receive(pushEvent({ after: old, before: "0".repeat(40), modified: [] }));
    await o.allAt("old");
    const head = repo.commit(files("new"), "new");
    await a.probot.receive(pushEvent({ after: head, before: old, modified: [] }));
    await o.allAt("new");
    await a.settle();
    const rawNamespace = namespaces.create("raw").then(async (rawNs) => {
      await Promise.all(objects("new", rawNs).map((obj) => admin.apply(obj)));
      return rawNs;
    });
    let comment = 5000;
    const timedComment = async (body: string, version: string) => {
      o.mark();
      const at = performance.now();
      await a.probot.receive(issueCommentEvent({ body, sender: { login: "alice" }, commentId: ++comment }));
      const applied = await o.allAt(version);
      const first = o.firstSinceMark ?? applied;
      await a.settle();
      return { total: applied - at, deciding: first - at };
    };
    for (let i = 1; i <= trials; i++) {
      const r = await timedComment(`/rollback dev ${old}`, "old");
      rollback.total.push(r.total);
      rollback.deciding.push(r.deciding);
      const u = await timedComment("/unpin dev", "new");
      unpin.total.push(u.total);
      unpin.deciding.push(u.deciding);
      const rawNs = await rawNamespace;
      const changed = objects(i % 2 === 1 ? "old" : "new", rawNs);
      const dryAt = performance.now();
      await Promise.all(changed.map((obj) => admin.dryRunApply(obj)));
      const at = performance.now();
      await Promise.all(changed.map((obj) => admin.apply(obj)));
      raw.push(performance.now() - at);
      rawDryRun.push(at - dryAt);
      progress(
        `rollback trial ${i}/${trials}: /rollback -> old render ${r.total.toFixed(0)} ms (first write ${r.deciding.toFixed(0)} ms); /unpin -> head ${u.total.toFixed(0)} ms (first write ${u.deciding.toFixed(0)} ms)`,
      );
    }
    const replies = github.comments.map((c) => c.body);
    const rolledBack = replies.filter((b) => /rolled back to/.test(b)).length;
    if (rolledBack !== trials)
      throw new Error(`${rolledBack} of ${trials} rollbacks were answered as done: ${replies.at(-1)}`);
  } finally {
    await observer?.stop();
    for (const rt of app?.parts.runtimes.all() ?? []) {
      await rt.stop();
      rt.reporter.close();
    }
    app?.mock.reset();
    await namespaces.removeAll();
    admin.close();
    syncward.close();
  }
  const details = {
    trials,
    objects: OBJECTS,
    rawApplyMedianMs: median(raw),
    rawDryRunMedianMs: median(rawDryRun),
  };
  return {
    measurements: [
      ...medianAndP99(
        `rollback: /rollback comment -> the old render applied (${OBJECTS} objects)`,
        rollback.total,
        {
          median: ["< 2 s", 2_000],
          p99: ["< 5 s", 5_000],
          details: { ...details, toFirstWriteMedianMs: median(rollback.deciding) },
        },
      ),
      ...medianAndP99(
        `rollback: /unpin comment -> the branch head applied (${OBJECTS} objects)`,
        unpin.total,
        {
          median: ["< 2 s", 2_000],
          p99: ["< 5 s", 5_000],
          details: { ...details, toFirstWriteMedianMs: median(unpin.deciding) },
        },
      ),
    ],
    data: { rollbackMs: rollback, unpinMs: unpin, rawApplyMs: raw, rawDryRunMs: rawDryRun },
  };
}

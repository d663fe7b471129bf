// `syncward controller` as real processes: killed mid-sync and restarted, it converges with
// nothing lost; two replicas never act on one environment at once, and a survivor takes over;
// stopped with SIGTERM mid-sync, it exits 0 having released its Leases, and a standby takes over.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { localAppId } from "../../src/state/identity.ts";
import { StateStore } from "../../src/state/store.ts";
import { ensureBuilt } from "../support/built.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { frontReady, TWO_WAVES } from "../support/two-waves.ts";

const cluster = useCluster();
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill("SIGKILL");
});

interface Controller {
  child: ChildProcess;
  lines: string[];
  /** What it wrote to stderr (the JSON log). */
  log: () => string;
}

before(() => ensureBuilt());

function startController(repo: string, args: string[], env: NodeJS.ProcessEnv = {}): Controller {
  const child = spawn(
    process.execPath,
    ["bin/syncward.js", "controller", "--repo", repo, "--kubeconfig", cluster.syncwardKubeconfig, ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    },
  );
  children.push(child);
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (d: Buffer) => {
    buffer += d.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  let log = "";
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  return { child, lines, log: () => log };
}

function config(ns: string): string {
  return `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`;
}

const configMaps = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-${i}
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {tag: "${tag}"}
`,
  ).join("---\n");

// minReadySeconds keeps wave 0 Progressing for a few seconds: a window to kill the controller in.
const slowDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  minReadySeconds: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`;

const countConfigMaps = async (ns: string) =>
  (await cluster.client.list("v1", "ConfigMap", { namespace: ns })).items.filter((c) =>
    c.metadata.name.startsWith("cm-"),
  ).length;

const tagsOf = async (ns: string) =>
  (await cluster.client.list("v1", "ConfigMap", { namespace: ns })).items
    .filter((c) => c.metadata.name.startsWith("cm-"))
    .map((c) => (c as unknown as { data: { tag: string } }).data.tag);

describe("syncward controller processes", () => {
  it("converges after being killed mid-sync, with its history intact", async () => {
    const ns = await cluster.namespace("kill");
    const stateNs = await cluster.stateNamespace("kill-state");
    const repo = makeRepo({
      ".github/syncward.yml": config(ns),
      "app/deploy.yaml": slowDeployment,
      "app/cms.yaml": configMaps(40, "a"),
    });
    const args = ["--app", "kill", "--state-namespace", stateNs, "--identity", "replica-1", "--poll", "1s"];
    const first = startController(repo.dir, args);
    await eventually(
      "wave 0 applied",
      async () => Boolean(await cluster.client.get("apps/v1", "Deployment", ns, "web")),
      30_000,
    );
    first.child.kill("SIGKILL");
    assert.equal(
      await countConfigMaps(ns),
      0,
      "killed while wave 0 was still becoming healthy: wave 1 not applied",
    );

    const second = startController(repo.dir, args);
    await eventually(
      "all 40 ConfigMaps after the restart",
      async () => (await countConfigMaps(ns)) === 40,
      60_000,
    );
    const store = new StateStore(cluster.client, stateNs);
    const state = await eventually("a successful sync in history", async () => {
      const s = await store.load(`${localAppId({ name: "kill", path: "" })}.dev`);
      return s.history.some((h) => h.result === "Succeeded") ? s : undefined;
    });
    assert.equal(state.lastSyncedRevision, repo.head());
    assert.equal(state.syncStatus, "Synced");
    second.child.kill("SIGTERM");
  });

  it("keeps a freeze across a kill mid-sync of another environment: the frozen one stays put", async () => {
    const devNs = await cluster.namespace("frz-dev");
    const prodNs = await cluster.namespace("frz-prod");
    const stateNs = await cluster.stateNamespace("frz-state");
    const repo = makeRepo({
      ".github/syncward.yml": `${config(devNs)}  - name: prod
    source: {path: app}
    destination: {namespace: ${prodNs}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`,
      "app/deploy.yaml": slowDeployment,
      "app/cms.yaml": configMaps(5, "a"),
    });
    const first = repo.head();
    const args = ["--app", "frz", "--state-namespace", stateNs, "--identity", "replica-1", "--poll", "1s"];
    const store = new StateStore(cluster.client, stateNs);
    const synced = async (env: string, sha: string) =>
      (await store.load(`${localAppId({ name: "frz", path: "" })}.${env}`)).lastSyncedRevision === sha;
    const killed = startController(repo.dir, args);
    await eventually(
      "both environments synced",
      async () => (await synced("dev", first)) && (await synced("prod", first)),
      60_000,
    );

    const freeze = spawnSync(
      process.execPath,
      [
        "bin/syncward.js",
        "app",
        "freeze",
        "prod",
        "--reason",
        "release",
        "--repo",
        repo.dir,
        "--kubeconfig",
        cluster.syncwardKubeconfig,
        "--app",
        "frz",
        "--state-namespace",
        stateNs,
      ],
      { encoding: "utf8", env: { ...process.env, SYNCWARD_ACTOR: "release-manager" } },
    );
    assert.equal(freeze.status, 0, freeze.stderr);
    // A new rollout (minReadySeconds: 4) in wave 0, then new ConfigMaps in wave 1.
    const second = repo.commit({
      "app/deploy.yaml": slowDeployment.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web}, annotations: {rev: '2'}}",
      ),
      "app/cms.yaml": configMaps(5, "b"),
    });
    await eventually(
      "dev's wave 0 at the second revision",
      async () => {
        const d = (await cluster.client.get("apps/v1", "Deployment", devNs, "web")) as
          | { spec: { template: { metadata: { annotations?: Record<string, string> } } } }
          | undefined;
        return d?.spec.template.metadata.annotations?.rev === "2";
      },
      30_000,
    );
    killed.child.kill("SIGKILL");
    assert.deepEqual(await tagsOf(devNs), Array(5).fill("a"), "killed before dev's wave 1");

    const restarted = startController(repo.dir, args);
    await eventually("dev converged to the second revision", async () => synced("dev", second), 60_000);
    assert.deepEqual(await tagsOf(devNs), Array(5).fill("b"));
    // The restarted process looked at prod, and left it alone because of the freeze.
    await eventually(
      "the restarted controller to report prod frozen",
      async () =>
        restarted.lines.some((l) =>
          l.startsWith(`[prod] ${second.slice(0, 7)} OutOfSync (Frozen by release-manager`),
        ),
      30_000,
    );
    assert.deepEqual(await tagsOf(prodNs), Array(5).fill("a"));
    const prod = await store.load(`${localAppId({ name: "frz", path: "" })}.prod`);
    assert.equal(prod.freeze?.by, "release-manager");
    assert.equal(prod.freeze?.reason, "release");
    assert.equal(prod.lastSyncedRevision, first);
    assert.ok(!prod.history.some((h) => h.revision === second), "nothing of the second revision ran in prod");
    restarted.child.kill("SIGTERM");
  });

  it("lets exactly one of two replicas act, and the other takes over when it dies", async () => {
    const ns = await cluster.namespace("ha");
    const stateNs = await cluster.stateNamespace("ha-state");
    const repo = makeRepo({ ".github/syncward.yml": config(ns), "app/cms.yaml": configMaps(3, "one") });
    const common = ["--app", "ha", "--state-namespace", stateNs, "--poll", "1s", "--lease-duration", "3s"];
    const a = startController(repo.dir, [...common, "--identity", "replica-a"]);
    await eventually("replica-a synced", async () => a.lines.some((l) => l.includes("sync (poll")), 30_000);
    const b = startController(repo.dir, [...common, "--identity", "replica-b"]);
    await eventually(
      "replica-b started",
      async () => b.lines.some((l) => l.startsWith("syncward controller: watching")),
      30_000,
    );
    // A second revision while both run: only the lease holder syncs it.
    const second = repo.commit({ "app/cms.yaml": configMaps(3, "two") });
    await eventually(
      "second revision synced",
      async () => a.lines.some((l) => l.includes(second.slice(0, 7)) && l.includes("sync (")),
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(
      b.lines.filter((l) => l.includes("sync (")).length,
      0,
      `replica-b must not act while replica-a holds the lease:\n${b.lines.join("\n")}`,
    );

    a.child.kill("SIGKILL");
    const third = repo.commit({ "app/cms.yaml": configMaps(3, "three") });
    await eventually(
      "replica-b takes over and syncs the third revision",
      async () => b.lines.some((l) => l.includes(third.slice(0, 7)) && l.includes("sync (")),
      30_000,
    );
    const cm = (await cluster.client.get("v1", "ConfigMap", ns, "cm-0")) as unknown as {
      data: { tag: string };
    };
    assert.equal(cm.data.tag, "three");
    const history = (
      await new StateStore(cluster.client, stateNs).load(`${localAppId({ name: "ha", path: "" })}.dev`)
    ).history;
    assert.deepEqual(
      history.filter((h) => h.result === "Succeeded").map((h) => h.revision),
      [repo.git("rev-parse", "HEAD~2"), second, third],
      "each revision synced exactly once",
    );
    b.child.kill("SIGTERM");
  });

  it("stops on SIGTERM mid-sync: exits 0 within its bound, history says where, its Leases released by its exit, and a standby takes over", async (t) => {
    const ns = await cluster.namespace("term");
    const stateNs = await cluster.stateNamespace("term-state");
    const repo = makeRepo({
      ".github/syncward.yml": `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}, healthTimeout: 10m}
`,
      "app/all.yaml": TWO_WAVES,
    });
    const common = ["--app", "term", "--state-namespace", stateNs, "--poll", "1s"];
    // The bound the stop must keep (SYNCWARD_STOP_TIMEOUT): past it the process exits 1.
    const bound = { SYNCWARD_STOP_TIMEOUT: "20s" };
    const a = startController(repo.dir, [...common, "--identity", "replica-a"], bound);
    await eventually(
      "replica-a to write wave 0 and wait for it",
      async () => Boolean(await cluster.client.get("v1", "Service", ns, "front")),
      60_000,
    );
    const b = startController(repo.dir, [...common, "--identity", "replica-b"], bound);
    await eventually(
      "replica-b started, standing by",
      async () => b.lines.some((l) => l.startsWith("syncward controller: watching")),
      30_000,
    );
    const leases = await watchLeases(stateNs);
    try {
      assert.ok(leases.heldBy("replica-a", { apps: true }).length > 0, `replica-a holds the app\n${a.log()}`);
      assert.deepEqual(
        leases.heldBy("replica-b", { apps: true }),
        [],
        "replica-b waits: replica-a holds the app",
      );

      const exited = once(a.child, "exit");
      const sigterm = Date.now();
      a.child.kill("SIGTERM");
      const [code, signal] = await exited;
      const exit = Date.now();
      assert.deepEqual([code, signal], [0, null], `exit 0: stopped within SYNCWARD_STOP_TIMEOUT\n${a.log()}`);
      assert.ok(a.lines.includes("syncward controller: stopping"), a.lines.join("\n"));
      assert.match(a.log(), /stopped: every Lease released/);
      // Released by the process before it exited, not left to expire at the end of its term.
      const held = (
        await cluster.client.list("coordination.k8s.io/v1", "Lease", { namespace: stateNs })
      ).items.filter((l) => (l as LeaseObject).spec?.holderIdentity === "replica-a");
      assert.deepEqual(
        held.map((l) => l.metadata.name),
        [],
        "no Lease still held by replica-a",
      );
      const released = leases.releasedAt("replica-a");
      assert.ok(
        released !== undefined && released >= sigterm,
        "the watch saw replica-a's last Lease released",
      );
      t.diagnostic(
        `replica-a's Leases released ${released - sigterm} ms after SIGTERM, ${exit - released} ms before its exit was seen (exit ${exit - sigterm} ms after SIGTERM)`,
      );

      assert.equal(
        await cluster.client.get("v1", "ConfigMap", ns, "after-front"),
        undefined,
        "wave 1 not written",
      );
      const store = new StateStore(cluster.client, stateNs);
      const instance = `${localAppId({ name: "term", path: "" })}.dev`;
      const stopped = await store.load(instance);
      const last = stopped.history.at(-1);
      assert.equal(last?.result, "Failed");
      assert.match(last?.message ?? "", /stopped at a safe point .*stopped while waiting for service\/front/);
      assert.equal(stopped.stuck, undefined, "a stopped sync does not hold the revision as stuck");

      // The standby holds the app at once and finishes the sync once wave 0 is healthy.
      const takeover = await eventually(
        "replica-b to hold the app",
        async () => (leases.heldBy("replica-b", { apps: true }).length > 0 ? Date.now() : undefined),
        30_000,
      );
      t.diagnostic(`replica-b held the app ${takeover - exit} ms after replica-a's exit`);
      await frontReady(cluster.client, ns);
      const done = await eventually(
        "replica-b to finish the sync",
        async () => {
          const s = await store.load(instance);
          return s.lastSyncedRevision === repo.head() ? s : undefined;
        },
        60_000,
      );
      assert.equal(done.history.at(-1)?.result, "Succeeded", b.lines.join("\n"));
      assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "after-front"), "wave 1 written");
    } finally {
      leases.stop();
    }
    b.child.kill("SIGTERM");
    assert.deepEqual(await once(b.child, "exit"), [0, null], b.log());
  });
});

interface LeaseObject {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { holderIdentity?: string | null };
}

/**
 * The Leases of `namespace` as a watch reports them: who holds which, and the moment (this
 * process's clock) each holder's last Lease was released (holder emptied, taken by another, or
 * deleted). `apps: true` counts app Leases only, not the replicas' membership Leases.
 */
async function watchLeases(namespace: string) {
  const leases = new Map<string, { holder: string; member: boolean }>();
  const released = new Map<string, number>();
  const record = (l: LeaseObject) =>
    leases.set(l.metadata.name, {
      holder: l.spec?.holderIdentity ?? "",
      member: l.metadata.labels?.["syncward.dev/member"] === "true",
    });
  const list = await cluster.client.list("coordination.k8s.io/v1", "Lease", { namespace });
  for (const l of list.items) record(l as unknown as LeaseObject);
  const heldBy = (identity: string, only: { apps?: boolean } = {}) =>
    [...leases].filter(([, l]) => l.holder === identity && !(only.apps && l.member)).map(([name]) => name);
  const abort = new AbortController();
  void cluster.client
    .watch(
      "coordination.k8s.io/v1",
      "Lease",
      { namespace, resourceVersion: list.resourceVersion, signal: abort.signal },
      (type, obj) => {
        const lease = obj as unknown as LeaseObject;
        const before = leases.get(lease.metadata.name)?.holder ?? "";
        if (type === "DELETED") leases.delete(lease.metadata.name);
        else record(lease);
        if (before && heldBy(before).length === 0) released.set(before, Date.now());
      },
    )
    .catch(() => {});
  return { heldBy, releasedAt: (identity: string) => released.get(identity), stop: () => abort.abort() };
}

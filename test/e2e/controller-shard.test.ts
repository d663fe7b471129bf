// Scale-out as real processes: three `syncward controller --repos` replicas over 30 apps (a git
// repository each, one ConfigMap per app) share the apps out through Leases alone. They settle
// within ceil(apps / replicas) + 1 each; a replica killed with SIGKILL has its apps taken over
// and synced, a commit pushed while it lay dead included; a replica added takes its share and the
// others hand theirs back. The Leases in the API server are read as the truth of who holds what.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { instanceName, localAppId } from "../../src/state/identity.ts";
import { leaseNameFor } from "../../src/state/lease.ts";
import { StateStore } from "../../src/state/store.ts";
import { ensureBuilt } from "../support/built.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const APPS = 30;
const LEASE = "4s";
const children = new Map<string, ChildProcess>();
after(() => {
  for (const c of children.values()) c.kill("SIGKILL");
});
before(() => ensureBuilt());

const logDir = mkdtempSync(join(tmpdir(), "syncward-shard-logs-"));

function startReplica(identity: string, reposDir: string, stateNs: string): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      "bin/syncward.js",
      "controller",
      "--repos",
      reposDir,
      "--kubeconfig",
      cluster.syncwardKubeconfig,
      "--state-namespace",
      stateNs,
      "--identity",
      identity,
      "--poll",
      "3s",
      "--lease-duration",
      LEASE,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // Kept for a failure's post-mortem: which replica logged what.
  child.stdout?.pipe(createWriteStream(join(logDir, `${identity}.out`)));
  child.stderr?.pipe(createWriteStream(join(logDir, `${identity}.err`)));
  children.set(identity, child);
  return child;
}

const appName = (i: number) => `app-${String(i).padStart(2, "0")}`;

const configMap = (app: string, tag: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: ${app}}
data: {tag: "${tag}"}
`;

interface Lease {
  metadata: { name: string };
  spec?: { holderIdentity?: string };
}

describe("syncward controller replicas sharing 30 apps", () => {
  it("balance within the bound; a killed replica's apps are taken over and synced, a push meanwhile too; a new replica takes its share", async () => {
    const dst = await cluster.namespace("shard");
    const stateNs = await cluster.stateNamespace("shard-state");
    const store = new StateStore(cluster.client, stateNs);
    const reposDir = mkdtempSync(join(tmpdir(), "syncward-shard-repos-"));
    const repos = new Map<string, TestRepo>();
    for (let i = 0; i < APPS; i++) {
      const app = appName(i);
      // --repos takes every repository directly under the directory; its name is the app's.
      const repo = makeRepo(
        {
          ".github/syncward.yml": `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${dst}}
    syncPolicy: {automated: {prune: true}}
`,
          "app/cm.yaml": configMap(app, "v1"),
        },
        "main",
        join(reposDir, app),
      );
      repos.set(app, repo);
    }

    // Each app is named in the cluster by its identity: a checkout without an origin remote is
    // `local_<hash of its path>` (state/identity.ts), not its directory's name.
    const idOf = new Map(
      [...repos.keys()].map((app) => [app, localAppId({ path: realpathSync(join(reposDir, app)) })]),
    );
    const instanceOf = (app: string, env: string) => instanceName(idOf.get(app) as string, env);
    const appOfLease = new Map([...repos.keys()].map((app) => [leaseNameFor(instanceOf(app, "app")), app]));
    /** Who holds each app, from the app Leases in the API server. */
    const holders = async (): Promise<Map<string, string>> => {
      const { items } = await cluster.client.list("coordination.k8s.io/v1", "Lease", { namespace: stateNs });
      const held = new Map<string, string>();
      for (const lease of items as unknown as Lease[]) {
        const app = appOfLease.get(lease.metadata.name);
        const holder = lease.spec?.holderIdentity;
        if (app && holder) held.set(app, holder);
      }
      return held;
    };
    const countBy = (held: Map<string, string>) => {
      const counts = new Map<string, number>();
      for (const h of held.values()) counts.set(h, (counts.get(h) ?? 0) + 1);
      return counts;
    };
    /** Every app held by one of `live`, none holding more than ceil(apps / live) + 1. */
    const balancedOver = async (live: string[]) => {
      const held = await holders();
      if (held.size !== APPS || [...held.values()].some((h) => !live.includes(h))) return undefined;
      const bound = Math.ceil(APPS / live.length) + 1;
      const counts = countBy(held);
      return [...counts.values()].every((n) => n <= bound) ? { held, counts } : undefined;
    };
    const tagOf = async (app: string) =>
      (
        (await cluster.client.get("v1", "ConfigMap", dst, app)) as unknown as
          | { data?: { tag?: string } }
          | undefined
      )?.data?.tag;
    const syncedAt = async (app: string, sha: string) =>
      (await store.load(instanceOf(app, "dev"))).lastSyncedRevision === sha;

    try {
      for (const id of ["replica-1", "replica-2", "replica-3"]) startReplica(id, reposDir, stateNs);
      const settled = await eventually(
        "30 apps held by the 3 replicas, each within ceil(30/3)+1",
        () => balancedOver(["replica-1", "replica-2", "replica-3"]),
        90_000,
      );
      assert.deepEqual([...settled.counts.keys()].sort(), ["replica-1", "replica-2", "replica-3"]);
      await eventually(
        "every app synced and recorded",
        async () => {
          for (const [app, repo] of repos) {
            if ((await tagOf(app)) !== "v1" || !(await syncedAt(app, repo.head()))) return false;
          }
          return true;
        },
        90_000,
      );

      // Kill one replica; before anyone notices, push to one of the apps it held.
      const victim = "replica-2";
      const victimApps = [...settled.held].filter(([, h]) => h === victim).map(([app]) => app);
      assert.ok(victimApps.length > 0);
      children.get(victim)?.kill("SIGKILL");
      const pushedApp = victimApps[0] as string;
      const pushed = (repos.get(pushedApp) as TestRepo).commit({ "app/cm.yaml": configMap(pushedApp, "v2") });

      const taken = await eventually(
        "the killed replica's apps taken over by the two survivors, each within ceil(30/2)+1",
        () => balancedOver(["replica-1", "replica-3"]),
        60_000,
      );
      for (const app of victimApps) assert.notEqual(taken.held.get(app), victim);
      await eventually(
        "the commit pushed during the takeover deployed",
        async () => (await tagOf(pushedApp)) === "v2",
        60_000,
      );
      await eventually("recorded as synced", () => syncedAt(pushedApp, pushed), 30_000);
      const history = (await store.load(instanceOf(pushedApp, "dev"))).history;
      assert.deepEqual(
        history.filter((h) => h.result === "Succeeded").map((h) => h.revision),
        [(repos.get(pushedApp) as TestRepo).git("rev-parse", "HEAD~1"), pushed],
        "each revision synced once",
      );

      // A fresh replica joins: the survivors hand apps back until it holds its share.
      startReplica("replica-4", reposDir, stateNs);
      const rebalanced = await eventually(
        "replica-4 to hold apps and everyone within ceil(30/3)+1",
        async () => {
          const b = await balancedOver(["replica-1", "replica-3", "replica-4"]);
          return b && (b.counts.get("replica-4") ?? 0) > 0 ? b : undefined;
        },
        60_000,
      );
      assert.ok(
        (rebalanced.counts.get("replica-4") ?? 0) >= Math.floor(APPS / 3) - 1,
        JSON.stringify([...rebalanced.counts]),
      );
      // The apps that moved keep syncing under their new holder.
      const moved = [...rebalanced.held].find(([, h]) => h === "replica-4")?.[0] as string;
      const third = (repos.get(moved) as TestRepo).commit({ "app/cm.yaml": configMap(moved, "v3") });
      await eventually(
        "a commit to an app replica-4 took is deployed",
        async () => (await tagOf(moved)) === "v3",
        60_000,
      );
      await eventually("and recorded", () => syncedAt(moved, third), 30_000);
    } catch (err) {
      for (const id of children.keys()) {
        for (const ext of ["out", "err"]) {
          const text = readFileSync(join(logDir, `${id}.${ext}`), "utf8")
            .split("\n")
            .slice(-40)
            .join("\n");
          process.stderr.write(`---- ${id}.${ext}\n${text}\n`);
        }
      }
      throw err;
    } finally {
      for (const c of children.values()) c.kill("SIGTERM");
    }
  });
});

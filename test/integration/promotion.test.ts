// Promotion on the real control plane: staging -> prod with healthyFor 2s. prod deploys a commit
// only once staging has kept it synced and Healthy for 2s without a break (staging deploys another
// path than prod: what is promoted is the commit), is woken by staging's state change alone (no
// polls here), never takes a commit whose staging release turned Degraded within the window,
// `promote` on a gated environment goes through its approval, and an approval of a commit staging
// proves no more waits for staging's proof (live has no automated sync: the approval was the act).
//
// staging's release is a custom resource whose health an operator's Lua check reads from its
// status, which the test writes as its controller would: Ready (Healthy) or Broken (Degraded).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { type PolicyRule, stateRbacFor } from "../support/syncward-account.ts";

const cluster = useCluster();
const HEALTHY_FOR = 2_000;

const group = `p${Math.random().toString(36).slice(2, 8)}.example.com`;
const HEALTH_LUA = `hs = {}
local phase = (obj.status or {}).phase
if phase == "Ready" then hs.status = "Healthy" elseif phase == "Broken" then hs.status = "Degraded" else hs.status = "Progressing" end
hs.message = phase or "new"
return hs
`;
const crd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `webs.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural: "webs", singular: "web", kind: "Web", listKind: "WebList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
};
const web = (version: string) => `apiVersion: ${group}/v1
kind: Web
metadata: {name: web}
spec: {image: "example.com/web:${version}"}
`;
const configMap = (version: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {version: "${version}"}
`;
const files = (version: string) => ({
  "overlays/staging/web.yaml": web(version),
  "overlays/prod/settings.yaml": configMap(version),
});

interface Setup {
  repo: TestRepo;
  reconciler: Reconciler;
  ns: { staging: string; prod: string; live: string };
  state(env: string): Promise<EnvironmentState>;
  /** Every event the reconciler emitted. */
  events: ReconcilerEvent[];
  /** staging's Deployment reads Degraded (past its progress deadline) from now on, or Healthy again. */
  setBroken(broken: boolean): void;
  stop(): Promise<void>;
}

async function setUp(): Promise<Setup> {
  const ns = {
    staging: await cluster.namespace("promo-stg"),
    prod: await cluster.namespace("promo-prod"),
    live: await cluster.namespace("promo-live"),
  };
  const stateNs = await cluster.stateNamespace("promo-state");
  const repo = makeRepo(files("1"));
  const events: ReconcilerEvent[] = [];
  const automated = { automated: { prune: true, selfHeal: true } };
  const promotion = { after: "staging", healthyFor: `${HEALTHY_FOR}ms` };
  const reconciler = new Reconciler({
    app: `promo-${ns.prod}`,
    config: parseConfig(
      stringify({
        environments: [
          {
            name: "staging",
            source: { path: "overlays/staging" },
            destination: { namespace: ns.staging },
            syncPolicy: { ...automated, healthTimeout: "30s" },
          },
          {
            name: "prod",
            source: { path: "overlays/prod" },
            destination: { namespace: ns.prod },
            syncPolicy: automated,
            promotion,
          },
          {
            name: "live",
            source: { path: "overlays/prod" },
            destination: { namespace: ns.live },
            approval: { users: ["alice"] },
            promotion,
          },
        ],
      }),
    ),
    client: account(),
    healthChecks: { [`${group}/Web`]: { "health.lua": HEALTH_LUA } },
    source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-trees-"))),
    emit: (e) => events.push(e),
    log: pino({ level: process.env.SYNCWARD_TEST_LOG ?? "silent" }),
    stateNamespace: stateNs,
    identity: "promotion-test",
    leases: false,
    watch: true,
    // No polls: prod hears of staging only through staging's state.
    pollIntervalMs: 0,
  });
  // The controller of staging's Web: its status says Ready, or Broken while `broken`.
  let broken = false;
  let running = true;
  const statusPath = `/apis/${group}/v1/namespaces/${ns.staging}/webs/web/status`;
  const play = (async () => {
    while (running) {
      try {
        const obj = await cluster.client.get(`${group}/v1`, "Web", ns.staging, "web");
        const phase = (obj as { status?: { phase?: string } } | undefined)?.status?.phase;
        const want = broken ? "Broken" : "Ready";
        if (obj && phase !== want)
          await cluster.client.request("PATCH", statusPath, {
            contentType: "application/merge-patch+json",
            body: { status: { phase: want } },
          });
      } catch {
        // The next round tries again.
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  reconciler.start();
  return {
    repo,
    reconciler,
    ns,
    events,
    state: (env) => reconciler.store.load(reconciler.controller(env).instance),
    setBroken: (b) => {
      broken = b;
    },
    stop: async () => {
      running = false;
      await play;
      await reconciler.stop();
    },
  };
}

const valueIn = async (namespace: string) =>
  ((await cluster.client.get("v1", "ConfigMap", namespace, "settings")) as { data?: { version?: string } })
    ?.data?.version;

/** `env`'s state once it runs `revision` (a promotion waits for staging's window to close). */
const runs = (t: Setup, env: string, revision: string) =>
  eventually(
    `${env} at ${revision.slice(0, 7)}`,
    async () => {
      const s = await t.state(env);
      return s.lastSyncedRevision === revision ? s : undefined;
    },
    HEALTHY_FOR + 20_000,
  );

/** `/promote live` by bob, from GitHub. */
const PROMOTE_LIVE = {
  trigger: "comment" as const,
  actor: "bob",
  reason: "/promote live by @bob",
  fromGitHub: true,
};

/** Resolves once staging has kept `revision` Healthy for healthyFor without a break, as its state records it. */
const stagingProves = (t: Setup, revision: string) =>
  eventually(
    `staging Healthy at ${revision.slice(0, 7)} for ${HEALTHY_FOR}ms`,
    async () => {
      const open = (await t.state("staging")).healthRecords?.at(-1);
      return (
        open?.revision === revision &&
        open.until === undefined &&
        Date.parse(open.since) + HEALTHY_FOR < Date.now()
      );
    },
    HEALTHY_FOR + 20_000,
  );

/** deploy/'s grants, the Web rules, and (cluster-wide) deploy/'s state Role's rules. */
function account() {
  const stateRole = stateRbacFor("any").find((o) => o.kind === "Role") as unknown as { rules: PolicyRule[] };
  return cluster.syncwardClientWith([
    {
      apiGroups: [group],
      resources: ["webs"],
      verbs: ["get", "list", "watch", "patch", "create", "update", "delete"],
    },
    ...stateRole.rules,
  ]).client;
}

describe("promotion staging -> prod (healthyFor 2s)", () => {
  let t: Setup;
  before(async () => {
    await cluster.client.apply(crd);
    await eventually("the Web CRD to be served", async () => {
      const list = await cluster.client.request<{ resources: Array<{ name: string }> }>(
        "GET",
        `/apis/${group}/v1`,
      );
      return list.resources.some((r) => r.name === "webs");
    });
    t = await setUp();
  });
  after(async () => {
    await t?.stop();
    await cluster.client.delete(
      {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        namespace: "",
        name: crd.metadata.name,
        apiVersion: "apiextensions.k8s.io/v1",
      },
      "background",
    );
  });

  it("takes a commit only once staging has kept it Healthy for 2s, woken by staging's state", async () => {
    const first = t.repo.head();
    const staged = await eventually("staging Healthy at the first commit", async () => {
      const s = await t.state("staging");
      const open = s.healthRecords?.at(-1);
      return open?.revision === first && open.until === undefined ? open : undefined;
    });
    const since = Date.parse(staged.since);
    // Before the window closes prod has deployed nothing.
    const early = HEALTHY_FOR - (Date.now() - since) - 300;
    if (early > 0) await new Promise((r) => setTimeout(r, early));
    assert.equal((await t.state("prod")).lastSyncedRevision, undefined, "prod waits for the window");
    assert.equal(await valueIn(t.ns.prod), undefined);

    const prod = await eventually("prod at the first commit", async () => {
      const s = await t.state("prod");
      return s.lastSyncedRevision === first ? s : undefined;
    });
    const entry = prod.history.at(-1);
    assert.equal(entry?.trigger, "promotion");
    assert.ok(
      Date.parse(entry?.startedAt ?? "") >= since + HEALTHY_FOR,
      `prod started ${entry?.startedAt}, staging Healthy since ${staged.since}`,
    );
    assert.deepEqual(entry?.promotion?.from, ["staging"]);
    assert.match(entry?.promotion?.evidence[0] ?? "", /^staging: Healthy for \d+s at this commit$/);
    assert.equal(await valueIn(t.ns.prod), "1");
  });

  it("never takes a commit whose staging release turned Degraded within the window; takes the fix", async () => {
    const bad = t.repo.commit(files("2"), "bad release");
    t.reconciler.controller("staging").nudge("push", "tester");
    await eventually("staging Healthy at the bad commit", async () => {
      const open = (await t.state("staging")).healthRecords?.at(-1);
      return open?.revision === bad && open.until === undefined;
    });
    t.setBroken(true);
    const ended = await eventually("staging Degraded at the bad commit", async () => {
      const last = (await t.state("staging")).healthRecords?.at(-1);
      return last?.revision === bad && last.ended === "Degraded" ? last : undefined;
    });
    assert.ok(
      Date.parse(ended.until ?? "") - Date.parse(ended.since) < HEALTHY_FOR,
      "Degraded within the window",
    );
    // Well past the window: prod stays where it was.
    await new Promise((r) => setTimeout(r, HEALTHY_FOR + 1_000));
    const prod = await t.state("prod");
    assert.notEqual(prod.lastSyncedRevision, bad);
    const held = t.events.filter((e) => e.type === "waiting" && e.env === "prod" && e.revision === bad);
    assert.match(
      (held.at(-1) as { reason?: string } | undefined)?.reason ?? "",
      /^promotion: staging: turned Degraded at this commit after \d+s Healthy$/,
    );
    assert.equal(await valueIn(t.ns.prod), "1");

    t.setBroken(false);
    const fix = t.repo.commit(files("3"), "fix");
    t.reconciler.controller("staging").nudge("push", "tester");
    await eventually(
      "prod at the fix",
      async () => (await t.state("prod")).lastSyncedRevision === fix,
      HEALTHY_FOR + 20_000,
    );
    assert.equal(await valueIn(t.ns.prod), "3");
    assert.ok(
      !(await t.state("prod")).history.some((h) => h.revision === bad),
      "the bad commit never reached prod",
    );
  });

  it("promote: refuses what is not proven, and a gated environment waits for its approval", async () => {
    const fix = (await t.state("staging")).lastSyncedRevision as string;
    const live = t.reconciler.controller("live");
    const staging = t.reconciler.controller("staging");
    const request = PROMOTE_LIVE;

    assert.match(
      "refusal" in (await staging.promote(request))
        ? ((await staging.promote(request)) as { refusal: string }).refusal
        : "",
      /^staging has no promotion configured/,
    );

    // A new commit staging has not proven yet: refused, saying how long it has been Healthy.
    const next = t.repo.commit(files("4"), "next");
    staging.nudge("push", "tester");
    await eventually("staging Healthy at the next commit", async () => {
      const open = (await t.state("staging")).healthRecords?.at(-1);
      return open?.revision === next && open.until === undefined;
    });
    const early = await live.promote(request);
    assert.ok("refusal" in early, JSON.stringify(early));
    assert.match(
      early.refusal,
      /staging runs [0-9a-f]{7}, which is not proven yet \(staging: Healthy for \d+s of 2s at this commit\)/,
    );

    await new Promise((r) => setTimeout(r, HEALTHY_FOR));
    const asked = await live.promote(request);
    assert.ok(!("refusal" in asked), JSON.stringify(asked));
    assert.equal(asked.revision, next);
    assert.equal(asked.held, true, "live needs an approval");
    assert.notEqual(fix, next);
    const waiting = await t.state("live");
    assert.equal(waiting.pendingSync?.revision, next);
    assert.equal(waiting.lastSyncedRevision, undefined);

    // The approval's check run shows the upstream's evidence.
    const wait = t.events.find(
      (e) => e.type === "awaitingApproval" && e.env === "live" && e.revision === next,
    );
    assert.match(
      (wait as { reason?: string } | undefined)?.reason ?? "",
      /^waiting for approval \(0\/1\); promotion: staging: Healthy for \d+s at this commit$/,
    );
    const approved = await live.approve(next, "alice", 1, "");
    assert.equal(approved.released, true, JSON.stringify(approved));
    const done = await eventually("live at the promoted commit", async () => {
      const s = await t.state("live");
      return s.lastSyncedRevision === next ? s : undefined;
    });
    assert.equal(await valueIn(t.ns.live), "4");
    const entry = done.history.at(-1);
    assert.deepEqual(entry?.promotion?.from, ["staging"]);
    assert.match(entry?.promotion?.evidence.join(", ") ?? "", /^staging: Healthy for \d+s at this commit$/);
  });

  it("an approval of a commit staging has not proven (any more) is kept, and live deploys it once staging proves it", async () => {
    const live = t.reconciler.controller("live");
    const staging = t.reconciler.controller("staging");
    const before = (await t.state("live")).lastSyncedRevision;
    const five = t.repo.commit(files("5"), "five");
    staging.nudge("push", "tester");
    await eventually("staging Healthy at five", async () => {
      const open = (await t.state("staging")).healthRecords?.at(-1);
      return open?.revision === five && open.until === undefined;
    });
    await new Promise((r) => setTimeout(r, HEALTHY_FOR));
    const request = PROMOTE_LIVE;
    const asked = await live.promote(request);
    assert.ok(!("refusal" in asked) && asked.revision === five && asked.held, JSON.stringify(asked));

    // staging turns Degraded at five before anyone approves: five is proven no more.
    t.setBroken(true);
    await eventually("staging Degraded at five", async () => {
      const last = (await t.state("staging")).healthRecords?.at(-1);
      return last?.revision === five && last.ended === "Degraded";
    });
    const approved = await live.approve(five, "alice", 1, await live.base(await t.state("live")));
    assert.equal(approved.released, false, JSON.stringify(approved));
    assert.equal(approved.refused, undefined);
    assert.match(
      approved.waiting ?? "",
      /^its upstreams have not proven it yet \(staging: turned Degraded at this commit after \d+s Healthy\); it deploys once they have, without another approval$/,
    );
    await live.idle();
    const waiting = await t.state("live");
    assert.equal(waiting.lastSyncedRevision, before, "nothing deployed");
    assert.equal(waiting.pendingSync?.revision, five);
    assert.equal(waiting.pendingSync?.approvedAwaitingProof, true);

    // Healthy again at five: once staging has kept it so for 2s, live deploys it, asked by nobody.
    t.setBroken(false);
    const done = await runs(t, "live", five);
    assert.equal(await valueIn(t.ns.live), "5");
    const entry = done.history.at(-1);
    assert.equal(entry?.actor, "bob", "the promotion bob asked for");
    assert.equal(entry?.promotion?.reason, "approved by @alice");
    assert.match(entry?.promotion?.evidence.join(", ") ?? "", /^staging: Healthy for \d+s at this commit$/);
    const reproven = (await t.state("staging")).healthRecords?.at(-1);
    assert.ok(
      Date.parse(entry?.startedAt ?? "") >= Date.parse(reproven?.since ?? "") + HEALTHY_FOR,
      "not before staging proved it again",
    );
  });

  it("an approval that waited for staging's proof does not end a pin set after it; one given after the pin does, credited to who counts", async () => {
    const live = t.reconciler.controller("live");
    const staging = t.reconciler.controller("staging");
    const five = (await t.state("live")).lastSyncedRevision as string;
    const six = t.repo.commit(files("6"), "six");
    staging.nudge("push", "tester");
    await stagingProves(t, six);
    const request = PROMOTE_LIVE;
    const degradedAtSix = async () => {
      t.setBroken(true);
      await eventually("staging Degraded at six", async () => {
        const last = (await t.state("staging")).healthRecords?.at(-1);
        return last?.revision === six && last.ended === "Degraded";
      });
    };
    const asked = await live.promote(request);
    assert.ok(!("refusal" in asked) && asked.revision === six && asked.held, JSON.stringify(asked));
    await degradedAtSix();
    const early = await live.approve(six, "alice", 1, await live.base(await t.state("live")));
    assert.match(early.waiting ?? "", /^its upstreams have not proven it yet/, JSON.stringify(early));

    // carol pins live where it runs, at five, before staging proves six again.
    const pinned = await live.rollback({ actor: "carol", target: { commit: five }, reason: "hold live" });
    assert.ok(!("refused" in pinned) && pinned.phase === "Succeeded", JSON.stringify(pinned));
    t.setBroken(false);
    await stagingProves(t, six);
    live.nudge("poll", "syncward");
    await live.idle();
    const held = await t.state("live");
    assert.equal(held.pin?.by, "carol", "alice's approval, given before the pin, does not end it");
    assert.equal(held.lastSyncedRevision, five);
    assert.equal(await valueIn(t.ns.live), "5");
    assert.equal(held.pendingSync?.approvedAwaitingProof, undefined);

    // Asked again, with the pin in view; staging turns Degraded before the approvals arrive.
    const again = await live.promote(request);
    assert.ok(!("refusal" in again) && again.held, JSON.stringify(again));
    const wait = t.events.findLast(
      (e) => e.type === "awaitingApproval" && e.env === "live" && e.revision === six,
    );
    assert.match(
      (wait as { reason?: string } | undefined)?.reason ?? "",
      /pinned at [0-9a-f]{7} by carol .*ends the pin/,
    );
    await degradedAtSix();
    // dave's approval was judged against another deployed revision: it does not count.
    const stale = await live.approve(six, "dave", 4, "0".repeat(40));
    assert.deepEqual(stale.approvers, [], JSON.stringify(stale));
    const counted = await live.approve(six, "alice", 1, await live.base(await t.state("live")));
    assert.match(counted.waiting ?? "", /^its upstreams have not proven it yet/, JSON.stringify(counted));
    t.setBroken(false);
    const done = await runs(t, "live", six);
    assert.equal(done.pin, undefined);
    assert.equal(await valueIn(t.ns.live), "6");
    const ended = done.history.findLast((h) => h.trigger === "unpin");
    assert.equal(ended?.actor, "alice");
    assert.match(
      ended?.message ?? "",
      /^pin at [0-9a-f]{7} \(rollback to history \d+ by carol\) ended by the approval of [0-9a-f]{7} by @alice; [0-9a-f]{7} deploys$/,
    );
  });

  it("never moves prod back to an older commit staging was rolled back to and proved", async () => {
    const staging = t.reconciler.controller("staging");
    const prod = t.reconciler.controller("prod");
    const six = t.repo.head();
    await runs(t, "prod", six);
    const five = t.repo.git("rev-parse", "HEAD~1");
    const back = await staging.rollback({ actor: "mallory", target: { commit: five } });
    assert.ok(!("refused" in back) && back.phase === "Succeeded", JSON.stringify(back));
    try {
      await stagingProves(t, five);
      prod.nudge("poll", "syncward");
      await prod.idle();
      assert.equal((await t.state("prod")).lastSyncedRevision, six, "prod stays at six");
      assert.equal(await valueIn(t.ns.prod), "6");
    } finally {
      await staging.unpin("mallory");
      await eventually(
        "staging back at six",
        async () => (await t.state("staging")).lastSyncedRevision === six,
      );
    }
  });

  it("never takes a commit staging proved that a force push dropped from the branch", async () => {
    const staging = t.reconciler.controller("staging");
    const prod = t.reconciler.controller("prod");
    const six = t.repo.head();
    await runs(t, "prod", six);
    // staging frozen: it runs what it is told, not the branch head.
    await staging.setFreeze({ by: "tester", reason: "hold" });
    const seven = t.repo.commit(files("7"), "seven");
    // main is force-pushed back before seven, onto another commit.
    t.repo.git("reset", "-q", "--hard", six);
    const eight = t.repo.commit(files("8"), "eight, rewritten");
    // A sync of seven begun before the force push (or `app sync --revision`) runs it on staging.
    const ran = await staging.sync({ trigger: "cli", actor: "tester", revision: seven, ignoreFreeze: true });
    assert.equal(ran.phase, "Succeeded", ran.message);
    await stagingProves(t, seven);
    prod.nudge("poll", "syncward");
    await prod.idle();
    assert.equal((await t.state("prod")).lastSyncedRevision, six, "prod does not take seven");
    assert.equal(await valueIn(t.ns.prod), "6");
    const said = t.events.filter((e) => e.type === "waiting" && e.env === "prod" && e.revision === eight);
    assert.match(
      (said.at(-1) as { reason?: string } | undefined)?.reason ?? "",
      /^promotion: [0-9a-f]{7} is proven but is not on main \(its history was rewritten, or the commit is another branch's\); staging: has not been Healthy at this commit/,
    );

    // Unfrozen, staging takes the rewritten head, and prod follows it once proven.
    await staging.setFreeze(undefined);
    await runs(t, "prod", eight);
    assert.equal(await valueIn(t.ns.prod), "8");
  });
});

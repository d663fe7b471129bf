// `syncward app rollback` and `app unpin` on a real repository and the real cluster: the rolled-back
// revision goes live and stays (a new commit, a manual sync, the automated pass and self-heal all
// keep it) until the pin is removed, and history says who did what with which entry.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { openContext } from "../../src/cli/context.ts";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { findEnvironment, parseConfig } from "../../src/config/load.ts";
import {
  type ControllerOptions,
  EnvironmentController,
} from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { PassSlots } from "../../src/reconciler/pass-slots.ts";
import { pinOf } from "../../src/reconciler/pin.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { STATE_KEY, StateStore } from "../../src/state/store.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { kubectl, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const trees = mkdtempSync(join(tmpdir(), "syncward-trees-"));
type StoredState = Pick<EnvironmentState, "history" | "pin" | "lastError">;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
  const code = await main(args, io);
  return { code, out, err };
}

const conf = (version: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\ndata: {version: "${version}"}\n`;
const extra = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {added: in-rev2}\n";
/** A Service the API server refuses (port out of range): the release that adds it fails. */
const invalidService =
  "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 70000}]}\n";
const GATED =
  "    syncPolicy: {automated: {prune: true, selfHeal: true}, retry: {limit: 0}}\n    approval: {users: [carol]}\n";

/** A state store whose reads wait for `before` while it is set: a test writes between a release's steps. */
class HeldStore extends StateStore {
  before: Promise<unknown> | undefined;
  override async load(instance: string): Promise<EnvironmentState> {
    await this.before;
    return super.load(instance);
  }
}

/**
 * dev's controller as one replica runs it, with no watches or polls (tests nudge it), on a state
 * store whose reads a test can hold; `other` is the same state as another replica writes it.
 */
async function controllerOf(name: string, policy: string, more: Partial<ControllerOptions> = {}) {
  const ns = await cluster.namespace(name);
  const stateNs = await cluster.stateNamespace(`${name}-state`);
  const config = `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n${policy}`;
  const repo = makeRepo({ ".github/syncward.yml": config, "app/conf.yaml": conf("v1") });
  const store = new HeldStore(cluster.syncwardClient, stateNs);
  const controller = new EnvironmentController({
    app: name,
    env: findEnvironment(parseConfig(config), "dev"),
    client: cluster.syncwardClient,
    store,
    source: new LocalGitSource(repo.dir, trees),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    pollIntervalMs: 0,
    watch: false,
    ...more,
  });
  const other = new StateStore(cluster.syncwardClient, stateNs);
  const version = async () =>
    (
      (await cluster.client.get("v1", "ConfigMap", ns, "conf")) as
        | { data?: Record<string, string> }
        | undefined
    )?.data?.version;
  const load = () => other.load(controller.instance);
  return { controller, repo, ns, store, other, version, load };
}

/** A repository with one manually synced environment, dev, and the CLI flags that reach it. */
async function manualApp(name: string, policy = "") {
  const ns = await cluster.namespace(name);
  const stateNs = await cluster.stateNamespace(`${name}-state`);
  const repo = makeRepo({
    ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n${policy}`,
    "app/conf.yaml": conf("v1"),
  });
  const options = {
    repo: repo.dir,
    kubeconfig: cluster.syncwardKubeconfig,
    app: name,
    "state-namespace": stateNs,
  };
  const common = Object.entries(options).flatMap(([k, v]) => [`--${k}`, v]);
  return { ns, stateNs, repo, options, common };
}

/** The same, automated with prune and self-heal. */
const automatedApp = (name: string) =>
  manualApp(name, "    syncPolicy: {automated: {prune: true, selfHeal: true}}\n");

/** What happens when a chart range or a remote base moves under a commit, written into the state. */
function rewriteStateIn(stateNs: string, change: (state: StoredState) => void): void {
  const list = JSON.parse(kubectl(["-n", stateNs, "get", "configmaps", "-o", "json"])) as {
    items: Array<{ metadata: { name: string }; data?: Record<string, string> }>;
  };
  const cm = list.items.find((c) => c.data?.[STATE_KEY] !== undefined);
  assert.ok(cm, "the environment's state");
  const state = JSON.parse(cm.data?.[STATE_KEY] ?? "{}") as StoredState;
  change(state);
  const patch = JSON.stringify({ data: { [STATE_KEY]: JSON.stringify(state) } });
  kubectl(["-n", stateNs, "patch", "configmap", cm.metadata.name, "--type=merge", "-p", patch]);
}

describe("syncward app rollback", () => {
  it("re-deploys an earlier revision and keeps it there until unpinned", async () => {
    const { ns, repo, options, common } = await automatedApp("rollback-shop");
    const live = async (name = "conf") =>
      (
        (await cluster.client.get("v1", "ConfigMap", ns, name)) as
          | { data?: Record<string, string> }
          | undefined
      )?.data;

    const rev1 = repo.head();
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    const rev2 = repo.commit({ "app/conf.yaml": conf("v2"), "app/extra.yaml": extra });
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    assert.equal((await live())?.version, "v2");

    const back = await run(["app", "rollback", "dev", "--reason", "v2 breaks checkout", ...common]);
    assert.equal(back.code, 0, back.err + back.out);
    assert.match(
      back.out,
      /Operation: Succeeded at [0-9a-f]{7}: rollback to history 1 \([0-9a-f]{7}\) by \S+, pinned \(v2 breaks checkout\)/,
    );
    assert.equal((await live())?.version, "v1", "rev1's objects are live again");
    assert.equal(await live("extra"), undefined, "what only rev2 declared is pruned");
    const got = await run(["app", "get", "dev", ...common]);
    assert.match(
      got.out,
      new RegExp(
        `^Pinned:\\s+${rev1.slice(0, 7)} by \\S+ at \\S+Z: \`syncward app unpin dev\` resumes$`,
        "m",
      ),
    );
    assert.match(got.out, new RegExp(`^Sync Status:\\s+Synced to pin \\(${rev1.slice(0, 7)}\\)$`, "m"));

    // A new commit: neither a manual sync, nor the automated pass, nor self-heal leaves rev1.
    const rev3 = repo.commit({ "app/conf.yaml": conf("v3") });
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    assert.equal((await live())?.version, "v1", "app sync keeps the pin");
    const named = await run(["app", "sync", "dev", "--revision", rev3, ...common]);
    assert.equal(named.code, 1, "a sync naming another revision is refused while pinned");
    assert.match(named.out, /Refused.*pinned at [0-9a-f]{7} by \S+ .*`syncward app unpin dev`/);
    const ctx = await openContext(options);
    try {
      const controller = ctx.reconciler.controller("dev");
      controller.nudge("push", "pusher");
      await controller.idle();
      assert.equal((await live())?.version, "v1", "the automated pass keeps the pin");
      kubectl([
        "-n",
        ns,
        "patch",
        "configmap",
        "conf",
        "--type=merge",
        "-p",
        '{"data":{"version":"by-hand"}}',
      ]);
      controller.nudge("selfHeal", "syncward");
      await controller.idle();
      assert.equal((await live())?.version, "v1", "self-heal defends the pinned revision");
    } finally {
      await ctx.close();
    }

    // A commit names the entry too: rev2's, by a prefix of its sha.
    const byCommit = await run(["app", "rollback", "dev", rev2.slice(0, 9), ...common]);
    assert.equal(byCommit.code, 0, byCommit.err + byCommit.out);
    assert.match(byCommit.out, /rollback to history 2 \([0-9a-f]{7}\) by \S+, pinned/);
    assert.equal((await live())?.version, "v2", "the commit's objects are live");

    const unpinned = await run(["app", "unpin", "dev", ...common]);
    assert.equal(unpinned.code, 0, unpinned.err);
    assert.match(unpinned.out, /^Unpinned [0-9a-f]{7}: the next sync takes the head of main$/m);
    assert.doesNotMatch((await run(["app", "get", "dev", ...common])).out, /^Pinned:/m);
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    assert.equal((await live())?.version, "v3", "unpinned, the next sync takes the branch head");

    const history = JSON.parse((await run(["app", "history", "dev", "-o", "json", ...common])).out) as Array<{
      id: number;
      revision: string;
      trigger: string;
      message: string;
      rollback?: { historyId: number; revision: string; by: string; reason: string };
    }>;
    // The last rollback (by commit, to rev2) and its unpin; the history's limit may have let the first go.
    const rollback = history.findLast((h) => h.trigger === "rollback");
    assert.equal(rollback?.revision, rev2);
    assert.match(rollback?.message ?? "", /^rollback to history 2 /);
    assert.deepEqual(
      { ...rollback?.rollback, by: "" },
      { historyId: 2, revision: rev2, by: "", reason: "" },
      "the entry keeps which entry it re-deployed",
    );
    // The table says which entry each rollback went back to, and why.
    const listed = (await run(["app", "history", "dev", ...common])).out;
    assert.match(listed, /^ROLLED BACK$/m);
    assert.match(listed, /^\d+: rollback to history 1 \([0-9a-f]{7}\) by \S+: v2 breaks checkout$/m);
    assert.match(listed, /^\d+: rollback to history 2 \([0-9a-f]{7}\) by \S+$/m);
    const unpin = history.find((h) => h.trigger === "unpin");
    assert.equal(unpin?.revision, rev2);
    assert.match(
      unpin?.message ?? "",
      /^unpinned [0-9a-f]{7} \(pinned by \S+ at \S+, rollback to history 2\) by \S+; the next sync takes the head of main$/,
    );
    assert.equal(history.at(-1)?.revision, rev3);
    assert.ok(history.some((h) => h.revision === rev2));
  });

  it("says what is wrong with a rollback that has nothing to go back to, changing nothing", async () => {
    const { common } = await manualApp("rollback-none");
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    const none = await run(["app", "rollback", "dev", ...common]);
    assert.equal(none.code, 2);
    assert.match(
      none.err,
      /dev has no earlier successful sync of another revision \(`syncward app history dev` lists them\)/,
    );
    const missing = await run(["app", "rollback", "dev", "7", ...common]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /dev has no history entry 7/);
    const bad = await run(["app", "rollback", "dev", "latest", ...common]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /"latest" is neither a history id \(a whole number\) nor a commit/);
    const unknownCommit = await run(["app", "rollback", "dev", "deadbee", ...common]);
    assert.equal(unknownCommit.code, 2);
    assert.match(unknownCommit.err, /dev has no successful sync of commit deadbee in its history/);
    assert.doesNotMatch((await run(["app", "get", "dev", ...common])).out, /^Pinned:/m);
    const unpin = await run(["app", "unpin", "dev", ...common]);
    assert.match(unpin.out, /^dev is not pinned$/m);
  });

  it("deploys only the render the entry applied: a commit that renders otherwise today is refused, pinning nothing", async () => {
    const { ns, stateNs, repo, common } = await manualApp("rollback-render");
    const version = async () =>
      ((await cluster.client.get("v1", "ConfigMap", ns, "conf")) as { data?: Record<string, string> })?.data
        ?.version;
    const rewriteState = (change: (state: StoredState) => void) => rewriteStateIn(stateNs, change);

    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    repo.commit({ "app/conf.yaml": conf("v2") });
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    const history = JSON.parse((await run(["app", "history", "dev", "-o", "json", ...common])).out) as Array<{
      id: number;
      renderDigest?: string;
    }>;
    const recorded = history.find((h) => h.id === 1)?.renderDigest;
    assert.match(
      recorded ?? "",
      /^[0-9a-f]{12,}$/,
      "a successful sync records the digest of what it applied",
    );

    rewriteState((state) => {
      const entry = state.history.find((h) => h.id === 1);
      if (entry) entry.renderDigest = "0".repeat(64);
    });
    const refused = await run(["app", "rollback", "dev", "1", ...common]);
    assert.equal(refused.code, 2, refused.out);
    assert.match(
      refused.err,
      /the render of [0-9a-f]{7} today is not the one history entry 1 applied \(digest 000000000000, now [0-9a-f]{12}\): .*; nothing was pinned/,
    );
    assert.equal(await version(), "v2", "nothing written");
    assert.doesNotMatch((await run(["app", "get", "dev", ...common])).out, /^Pinned:/m);

    // With the digest it recorded, the same rollback goes through and the pin carries the digest...
    rewriteState((state) => {
      const entry = state.history.find((h) => h.id === 1);
      if (entry) entry.renderDigest = recorded;
    });
    const back = await run(["app", "rollback", "dev", "1", ...common]);
    assert.equal(back.code, 0, back.err + back.out);
    assert.equal(await version(), "v1");
    // ...so a later pass at the pinned commit that renders otherwise writes nothing and says why.
    rewriteState((state) => {
      if (state.pin) state.pin.renderDigest = "f".repeat(64);
    });
    kubectl(["-n", ns, "patch", "configmap", "conf", "--type=merge", "-p", '{"data":{"version":"by-hand"}}']);
    const again = await run(["app", "sync", "dev", ...common]);
    assert.equal(again.code, 1, again.out);
    assert.match(again.out, /today is not the one history entry 1 applied .*nothing was written/);
    assert.equal(await version(), "by-hand", "the differing render was not applied");
  });

  it("self-heal at a pin whose render moved writes nothing, and history and the state say why, once", async () => {
    // Automated with self-heal, and no approval rule: nothing but the pin binds the render.
    const { ns, stateNs, repo, options, common } = await automatedApp("rollback-heal");
    const version = async () =>
      ((await cluster.client.get("v1", "ConfigMap", ns, "conf")) as { data?: Record<string, string> })?.data
        ?.version;
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    repo.commit({ "app/conf.yaml": conf("v2") });
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    const back = await run(["app", "rollback", "dev", "1", ...common]);
    assert.equal(back.code, 0, back.err + back.out);
    assert.equal(await version(), "v1");

    // The render of the pinned commit moves (as a chart range would), and someone edits by hand.
    rewriteStateIn(stateNs, (state) => {
      if (state.pin) state.pin.renderDigest = "f".repeat(64);
    });
    kubectl(["-n", ns, "patch", "configmap", "conf", "--type=merge", "-p", '{"data":{"version":"by-hand"}}']);
    const ctx = await openContext(options);
    try {
      const controller = ctx.reconciler.controller("dev");
      const instance = controller.instance;
      const before = (await ctx.reconciler.store.load(instance)).history.length;
      controller.nudge("selfHeal", "syncward");
      await controller.idle();
      assert.equal(await version(), "by-hand", "self-heal did not apply the fresh render");
      const state = await ctx.reconciler.store.load(instance);
      assert.equal(state.history.length, before + 1, "one entry says why");
      const entry = state.history.at(-1);
      assert.equal(entry?.trigger, "selfHeal");
      assert.equal(entry?.result, "Error");
      assert.match(
        entry?.message ?? "",
        /^the render of [0-9a-f]{7} today is not the one history entry 1 applied \(digest ffffffffffff, now [0-9a-f]{12}\): .*nothing was written$/,
      );
      assert.equal(state.lastError?.message, entry?.message);
      assert.equal(state.pin?.historyId, 1, "still pinned");

      // Another heal, and a push's pass: still nothing written, and said only once.
      controller.nudge("selfHeal", "syncward");
      await controller.idle();
      controller.nudge("push", "pusher");
      await controller.idle();
      assert.equal(await version(), "by-hand");
      assert.equal((await ctx.reconciler.store.load(instance)).history.length, before + 1);
    } finally {
      await ctx.close();
    }
  });

  it("on a gated environment an approval of a newer commit deploys it and ends the pin; a force push's commit does not", async () => {
    const { ns, repo, options, common } = await manualApp(
      "rollback-gated",
      "    syncPolicy: {automated: {prune: true, selfHeal: true}}\n    approval: {users: [carol]}\n",
    );
    const version = async () =>
      ((await cluster.client.get("v1", "ConfigMap", ns, "conf")) as { data?: Record<string, string> })?.data
        ?.version;
    const rev1 = repo.head();
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    repo.commit({ "app/conf.yaml": conf("v2") });
    assert.equal((await run(["app", "sync", "dev", ...common])).code, 0);
    assert.equal((await run(["app", "rollback", "dev", "1", ...common])).code, 0);
    assert.equal(await version(), "v1");

    const events: ReconcilerEvent[] = [];
    const ctx = await openContext(options, { emit: (e) => events.push(e) });
    try {
      const controller = ctx.reconciler.controller("dev");
      const load = () => ctx.reconciler.store.load(controller.instance);
      // A fix pushed on top: announced for approval, saying what approving it does.
      const rev3 = repo.commit({ "app/conf.yaml": conf("v3") });
      controller.nudge("push", "dave");
      await controller.idle();
      assert.equal(await version(), "v1", "nothing deploys before the approval");
      assert.equal((await load()).pendingSync?.revision, rev3);
      const wait = events.findLast((e) => e.type === "awaitingApproval" && e.revision === rev3);
      assert.match(
        (wait as { reason?: string } | undefined)?.reason ?? "",
        /^waiting for approval \(0\/1\); pinned at [0-9a-f]{7} by \S+ \(rollback to history 1\); \/approve dev deploys this commit and ends the pin, or \/unpin dev$/,
      );

      const approved = await controller.approve(rev3, "carol", 7, await controller.base(await load()));
      assert.equal(approved.released, true, JSON.stringify(approved));
      assert.equal(approved.endedPin?.historyId, 1);
      await controller.idle();
      assert.equal(await version(), "v3", "the approved commit is deployed");
      const after = await load();
      assert.equal(after.pin, undefined, "the pin ended");
      const [ended, synced] = after.history.slice(-2);
      assert.equal(ended?.trigger, "unpin");
      assert.equal(ended?.actor, "carol");
      assert.match(
        ended?.message ?? "",
        /^pin at [0-9a-f]{7} \(rollback to history 1 by \S+\) ended by the approval of [0-9a-f]{7} by @carol; [0-9a-f]{7} deploys$/,
      );
      assert.equal(synced?.revision, rev3);
      assert.equal(synced?.result, "Succeeded");

      // Pinned again at rev1; then main is force-pushed to a history that does not hold rev1.
      assert.equal((await run(["app", "rollback", "dev", rev1.slice(0, 7), ...common])).code, 0);
      assert.equal(await version(), "v1");
      repo.git("checkout", "-q", "--orphan", "rewritten");
      const orphan = repo.commit({ "app/conf.yaml": conf("rewritten") }, "rewritten history");
      repo.git("checkout", "-q", "-B", "main");
      controller.nudge("push", "mallory");
      await controller.idle();
      assert.notEqual((await load()).pendingSync?.revision, orphan, "not announced for approval");
      assert.equal(
        events.some((e) => e.type === "awaitingApproval" && e.revision === orphan),
        false,
      );
      const held = events.findLast((e) => e.type === "waiting" && e.revision === orphan);
      assert.match((held as { reason?: string } | undefined)?.reason ?? "", /^pinned at [0-9a-f]{7} by /);
      // An approval of it anyway (a stale wait, the Approve button) is recorded and deploys nothing.
      const refused = await controller.approve(orphan, "carol", 7, await controller.base(await load()));
      assert.equal(refused.released, false);
      assert.match(
        refused.refused ?? "",
        /^refused: dev is pinned at [0-9a-f]{7} by \S+ \(rollback to history \d+\), and [0-9a-f]{7} is not a newer commit of main after it .*does not end the pin; \/unpin dev first$/,
      );
      await controller.idle();
      assert.equal(await version(), "v1");
      assert.ok((await load()).pin, "still pinned");
    } finally {
      await ctx.close();
    }
  });

  it("an approval given before a rollback does not end its pin, nor does a fresh approval of the release it went back from", async () => {
    const { controller, repo, version, load } = await controllerOf("rollback-approved-before", GATED);
    const rev1 = repo.head();
    assert.equal((await controller.sync({ trigger: "cli", actor: "ops" })).phase, "Succeeded");
    // A release that fails: approved by carol, its sync refused by the API server.
    const bad = repo.commit({ "app/conf.yaml": conf("v2"), "app/svc.yaml": invalidService }, "bad");
    controller.nudge("push", "dave");
    await controller.idle();
    assert.equal((await load()).pendingSync?.revision, bad);
    const approved = await controller.approve(bad, "carol", 7, await controller.base(await load()));
    assert.equal(approved.released, true, JSON.stringify(approved));
    await controller.idle();
    assert.equal((await load()).history.at(-1)?.result, "Failed");
    assert.equal((await load()).lastSyncedRevision, rev1);

    // Rolled back to the release before it (as rollback.onDegraded does), pinned there.
    const back = await controller.rollback({ actor: "alice", target: { historyId: 1 } });
    assert.ok(!("refused" in back) && back.phase === "Succeeded", JSON.stringify(back));
    assert.equal(await version(), "v1");

    // The next pass: carol's old approval ends nothing, and the bad release is not synced again.
    controller.nudge("poll", "syncward");
    await controller.idle();
    const after = await load();
    assert.equal(after.pin?.revision, rev1, "still pinned");
    assert.equal(await version(), "v1");
    assert.ok(!after.history.some((h) => h.trigger === "unpin"), "no pin ended");
    assert.deepEqual(
      after.pendingApprovals,
      [],
      "carol's approval, given without the pin in view, is withdrawn",
    );
    assert.equal(after.pin?.from, bad, "the pin knows which release it went back from");

    // A fresh approval of the release the rollback went back from does not end it either.
    const again = await controller.approve(bad, "carol", 7, await controller.base(await load()));
    assert.equal(again.released, false);
    assert.match(
      again.refused ?? "",
      /^refused: dev is pinned at [0-9a-f]{7} by alice \(rollback to history 1\), and [0-9a-f]{7} is the release it went back from, so approving it does not end the pin; approve a commit on top of it, or \/unpin dev$/,
    );
    await controller.idle();
    assert.equal((await load()).pin?.revision, rev1);
    assert.equal(await version(), "v1");

    // The fix on top of it, approved after the pin, ends it.
    const fix = repo.commit({ "app/conf.yaml": conf("v3"), "app/svc.yaml": null }, "fix");
    controller.nudge("push", "dave");
    await controller.idle();
    assert.equal((await load()).pendingSync?.revision, fix);
    const fixed = await controller.approve(fix, "carol", 7, await controller.base(await load()));
    assert.equal(fixed.endedPin?.historyId, 1, JSON.stringify(fixed));
    await controller.idle();
    assert.equal(await version(), "v3");
    assert.equal((await load()).pin, undefined);
  });

  it("a retry of a release begun before a rollback's pin (set on another replica) is refused at the pin, not attempted again", async () => {
    const retry = "retry: {limit: 3, backoff: {duration: 1s, factor: 1, maxDuration: 1s}}";
    const { controller, repo, store, other, version, load } = await controllerOf(
      "rollback-retry",
      `    syncPolicy: {automated: {prune: true}, ${retry}}\n`,
      {
        // The failed first attempt of the bad release: another replica's /rollback pins entry 1
        // (the pin is written before its sync, which is handed to this one, the lease holder);
        // this replica's next read of the state is after it.
        log: Object.assign(pino({ level: "silent" }), {
          warn: (_obj: object, msg?: string) => {
            if (msg === "sync failed; retrying") store.before ??= pinElsewhere();
          },
        }),
      },
    );
    const pinElsewhere = () =>
      other.update(controller.instance, (s) => {
        const entry = s.history.find((h) => h.id === 1);
        if (entry) s.pin = pinOf(entry, "alice", "from the other replica");
      });
    const rev1 = repo.head();
    controller.nudge("push", "dave");
    await controller.idle();
    assert.equal(await version(), "v1");
    const bad = repo.commit({ "app/conf.yaml": conf("v2"), "app/svc.yaml": invalidService }, "bad");
    controller.nudge("push", "dave");
    await controller.idle();
    assert.ok(store.before, "the bad release was retried");

    const state = await load();
    assert.equal(state.pin?.revision, rev1);
    const entry = state.history.at(-1);
    assert.equal(entry?.revision, bad);
    assert.equal(entry?.result, "Refused", entry?.message);
    assert.match(
      entry?.message ?? "",
      /^refused: dev is pinned at [0-9a-f]{7} by alice \(rollback to history 1\), and nothing but [0-9a-f]{7} is written while it stands/,
    );
    assert.deepEqual(
      entry?.retried?.map((r) => r.revision),
      [bad],
      "only the attempt before the pin",
    );
    assert.equal(await version(), "v1");
  });

  it("an approval that ends a pin leaves it standing when a freeze comes before its sync", async () => {
    // One pass at a time, and the test holds the slot: what the approval releases queues behind it.
    const slots = new PassSlots(1, 600_000);
    const { controller, repo, other, version, load } = await controllerOf("rollback-freeze", GATED, {
      passes: slots,
    });
    assert.equal((await controller.sync({ trigger: "cli", actor: "ops" })).phase, "Succeeded");
    repo.commit({ "app/conf.yaml": conf("v2") });
    assert.equal((await controller.sync({ trigger: "cli", actor: "ops" })).phase, "Succeeded");
    const back = await controller.rollback({ actor: "alice", target: { historyId: 1 } });
    assert.ok(!("refused" in back) && back.phase === "Succeeded", JSON.stringify(back));
    const fix = repo.commit({ "app/conf.yaml": conf("v3") }, "fix");
    controller.nudge("push", "dave");
    await controller.idle();
    assert.equal((await load()).pendingSync?.revision, fix);

    const release = await slots.acquire();
    controller.nudge("poll", "syncward");
    const approved = await controller.approve(fix, "carol", 7, await controller.base(await load()));
    assert.equal(approved.endedPin?.historyId, 1, JSON.stringify(approved));
    // Between the approval and its sync, another replica (or the CLI) freezes dev.
    await other.update(controller.instance, (s) => {
      s.freeze = { by: "bob", at: new Date().toISOString(), reason: "incident" };
    });
    release();
    await controller.idle();
    const frozen = await load();
    assert.equal(frozen.pin?.historyId, 1, "the pin stays");
    assert.ok(!frozen.history.some((h) => h.trigger === "unpin"), "no pin ended");
    assert.equal(await version(), "v1");

    // Unfrozen, carol's approval (given after the pin) deploys the fix and ends the pin.
    await controller.setFreeze(undefined);
    controller.nudge("poll", "syncward");
    await controller.idle();
    assert.equal(await version(), "v3");
    assert.equal((await load()).pin, undefined);
  });
});

// The one gate through the reconciler, against the real control plane and a real git repository:
// a retry never moves a gated environment, a merge that removes `approval` still waits under the
// old rule, a docs-only commit needs nobody, and a refusal after an approval is told to the approver.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { floorsFromEnv } from "../../src/config/floors.ts";
import { findEnvironment, parseConfig } from "../../src/config/load.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import type { RequiredChecks } from "../../src/reconciler/required-checks.ts";
import { LocalGitSource, type RevisionSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;
const invalidService =
  "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 70000}]}\n";

/** The repository's `.github/syncward.yml` with one environment `prod` in `ns`. */
const configFile = (ns: string, fields: Record<string, unknown>) =>
  stringify({
    environments: [{ name: "prod", source: { path: "app" }, destination: { namespace: ns }, ...fields }],
  });

async function setup(
  fields: Record<string, unknown>,
  files: Record<string, string>,
  wrap: (s: RevisionSource) => RevisionSource = (s) => s,
  checks?: RequiredChecks,
  /** Sees each warning the controller logs. */
  onWarn: (msg: string) => void = () => undefined,
) {
  const ns = await cluster.namespace("rgate");
  const stateNs = await cluster.stateNamespace("rgate-state");
  const repo = makeRepo({ ".github/syncward.yml": configFile(ns, fields), ...files });
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const events: ReconcilerEvent[] = [];
  /** A controller of environment `name` as `configText` declares it, beside the others of app "gate". */
  const controllerFor = (configText: string, name = "prod") =>
    new EnvironmentController({
      app: "gate",
      env: findEnvironment(parseConfig(configText), name),
      client: cluster.syncwardClient,
      store,
      source: wrap(new LocalGitSource(repo.dir, cache)),
      emit: (e) => events.push(e),
      log: warnings(onWarn),
      pollIntervalMs: 0,
      watch: false,
      checks,
    });
  /** A controller with the config as committed at the branch head (as the app reloads it on a push). */
  const controllerAtHead = () => controllerFor(repo.git("show", "HEAD:.github/syncward.yml"));
  return { ns, repo, store, events, controllerFor, controllerAtHead, controller: controllerAtHead() };
}

/** A silent logger that hands each warning's message to `onWarn`. */
function warnings(onWarn: (msg: string) => void) {
  const log = pino({ level: "silent" });
  return Object.assign(log, { warn: (_obj: object, msg?: string) => onWarn(msg ?? "") });
}

const settingsOf = async (ns: string) =>
  (
    (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as
      | { data: { v: string } }
      | undefined
  )?.data.v;

/** A whole app's reconciler on `repoDir`, without leases, watches or polls: tests nudge it. */
const reconcilerFor = (
  app: string,
  config: ReturnType<typeof parseConfig>,
  repoDir: string,
  stateNamespace: string,
  more: Partial<ConstructorParameters<typeof Reconciler>[0]> = {},
) =>
  new Reconciler({
    app,
    config,
    client: cluster.syncwardClient,
    source: new LocalGitSource(repoDir, cache),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    stateNamespace,
    identity: "test",
    leases: false,
    watch: false,
    pollIntervalMs: 0,
    ...more,
  });

describe("the gate on a retry", () => {
  it("an approved sync that fails and is retried stays on the approved revision, even with retry.refresh, while a newer commit lands", async () => {
    let approvedSha = "";
    let reads = 0;
    const retry = {
      limit: 2,
      refresh: true,
      backoff: { duration: "300ms", factor: 1, maxDuration: "300ms" },
    };
    const { ns, repo, store, events, controller } = await setup(
      { syncPolicy: { automated: {}, retry }, approval: { users: ["carol"] } },
      { "app/cm.yaml": cm("1"), "app/svc.yaml": invalidService },
      // The first read of the branch is the approved (broken) commit; every later read sees the newer one.
      (source) => ({
        description: source.description,
        head: async (branch) => (reads++ < 2 ? approvedSha : source.head(branch)),
        resolve: (ref) => source.resolve(ref),
        tree: (sha) => source.tree(sha),
      }),
    );
    approvedSha = repo.head();
    controller.nudge("push", "alice");
    await controller.idle();
    assert.equal((await store.load(controller.instance)).pendingSync?.revision, approvedSha);
    const newer = repo.commit({ "app/svc.yaml": null, "app/cm.yaml": cm("unapproved") });
    await controller.approve(approvedSha, "carol", 3);
    await eventually("the approved sync ran and gave up", async () =>
      (await store.load(controller.instance)).history.some(
        (h) => h.revision === approvedSha && h.result === "Failed",
      ),
    );
    await controller.idle();
    const state = await store.load(controller.instance);
    const entry = state.history.find((h) => h.revision === approvedSha);
    assert.deepEqual(
      entry?.retried?.map((r) => r.revision),
      [approvedSha, approvedSha],
      "every attempt was the approved revision",
    );
    assert.notEqual(state.lastSyncedRevision, newer);
    assert.ok(!events.some((e) => e.type === "synced" && e.revision === newer));
    assert.notEqual(await settingsOf(ns), "unapproved");
    assert.equal(state.pendingSync?.revision, newer, "the newer commit waits for its own approval");
  });
});

describe("the retry race", () => {
  it("the approved sync fails on a transient error (an admission webhook down), a new commit lands meanwhile: the retry deploys the approved SHA, and the new commit waits", async () => {
    const retry = { limit: 5, refresh: true, backoff: { duration: "1s", factor: 1, maxDuration: "1s" } };
    const retrying: string[] = [];
    const { ns, repo, store, events, controller } = await setup(
      { syncPolicy: { automated: {}, retry }, approval: { users: ["carol"] } },
      { "app/cm.yaml": cm("approved") },
      (s) => s,
      undefined,
      (msg) => retrying.push(msg),
    );
    const approved = repo.head();
    const webhook = await admissionWebhookDown(ns);
    try {
      controller.nudge("push", "alice");
      await controller.idle();
      assert.equal((await store.load(controller.instance)).pendingSync?.revision, approved);
      await controller.approve(approved, "carol", 3);
      await eventually("the approved sync's first attempt failed and waits to retry", async () =>
        retrying.includes("sync failed; retrying"),
      );
      const newer = repo.commit({ "app/cm.yaml": cm("unapproved") });
      await webhook.remove();
      await eventually(
        "the approved revision deployed",
        async () => (await store.load(controller.instance)).lastSyncedRevision === approved,
        20_000,
      );
      await controller.idle();
      const state = await store.load(controller.instance);
      const entry = state.history.find((h) => h.result === "Succeeded");
      assert.equal(entry?.revision, approved, "the approved SHA, not the newer one");
      assert.equal(entry?.trigger, "retry");
      assert.ok((entry?.retried ?? []).every((r) => r.revision === approved));
      assert.equal(await settingsOf(ns), "approved");
      assert.ok(
        events.some((e) => e.type === "awaitingApproval" && e.revision === newer),
        "the newer commit waits for its own approval",
      );
      assert.ok(!events.some((e) => e.type === "synced" && e.revision === newer));
    } finally {
      await webhook.remove();
    }
  });
});

/** A validating webhook on ConfigMaps in `ns` whose service does not exist: every write there gets a 500. */
async function admissionWebhookDown(ns: string): Promise<{ remove: () => Promise<void> }> {
  const name = `syncward-gate-${ns}`;
  await cluster.client.apply({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name: "down.syncward.test",
        clientConfig: { service: { name: "nowhere", namespace: ns, path: "/" } },
        rules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["CREATE", "UPDATE"],
            resources: ["configmaps"],
          },
        ],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
        failurePolicy: "Fail",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 1,
      },
    ],
  } as never);
  const ref = {
    group: "admissionregistration.k8s.io",
    kind: "ValidatingWebhookConfiguration",
    namespace: "",
    name,
    apiVersion: "admissionregistration.k8s.io/v1",
  };
  return {
    remove: () =>
      cluster.client.delete(ref).then(
        () => undefined,
        () => undefined,
      ),
  };
}

describe("a config change that loosens the gate", () => {
  it("a merge that removes approval from prod still waits for an approval under the old rule, then deploys", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, store, events, controller, controllerAtHead } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    const first = await controller.sync({ trigger: "cli", actor: "admin" });
    assert.equal(first.phase, "Succeeded", first.message);

    const merge = repo.commit({
      ".github/syncward.yml": configFile(ns, { syncPolicy: { automated: {} } }),
      "app/cm.yaml": cm("2"),
    });
    // The app reloads the config of the new head: no approval in it.
    const reloaded = controllerAtHead();
    assert.equal(reloaded.env.approval, undefined);
    reloaded.nudge("merge", "mallory");
    await reloaded.idle();
    const waiting = events.find((e) => e.type === "awaitingApproval" && e.revision === merge);
    assert.ok(waiting, "the merge waits for approval");
    assert.equal(await settingsOf(ns), "1", "nothing deployed under the loosened rule");
    assert.equal((await store.load(reloaded.instance)).pendingSync?.revision, merge);
    assert.equal((await reloaded.rules()).approval?.users[0], "carol", "approvers of the old rule");

    // A person's /sync is held too (the old rule's approval applies to it).
    const requested = await reloaded.sync({ trigger: "comment", actor: "mallory" });
    assert.equal(requested.phase, "Refused");
    assert.match(
      requested.message,
      /waiting for approval \(0\/1\); the config change is held to the old rule \(approval removed/,
    );

    const approved = await reloaded.approve(merge, "carol", 3);
    assert.equal(approved.released, true);
    await eventually("prod deployed the approved merge", async () => (await settingsOf(ns)) === "2");
    await reloaded.idle();
    // Deployed: the new config is now the deployed one, and the next commit needs no approval.
    const next = repo.commit({ "app/cm.yaml": cm("3") });
    reloaded.nudge("push", "alice");
    await reloaded.idle();
    assert.equal((await store.load(reloaded.instance)).lastSyncedRevision, next);
  });

  it("when the deployed revision's config cannot be fetched, the gate holds instead of applying the new, looser rules", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    let unreachable = "";
    const flaky = (s: RevisionSource): RevisionSource => {
      const view = Object.create(s) as RevisionSource;
      view.tree = (sha: string) =>
        sha === unreachable ? Promise.reject(new Error("GitHub answered 503")) : s.tree(sha);
      return view;
    };
    const { ns, repo, store, events, controller, controllerAtHead } = await setup(
      gated,
      { "app/cm.yaml": cm("1") },
      flaky,
    );
    await controller.sync({ trigger: "cli", actor: "admin" });
    const deployed = repo.head();
    await store.update(controller.instance, (s) => {
      s.deployedRules = undefined;
    });
    const merge = repo.commit({
      ".github/syncward.yml": configFile(ns, { syncPolicy: { automated: {} } }),
      "app/cm.yaml": cm("2"),
    });
    unreachable = deployed;
    const reloaded = controllerAtHead();
    reloaded.nudge("merge", "mallory");
    await reloaded.idle();
    assert.equal(await settingsOf(ns), "1", "nothing deployed under rules it could not compare");
    // GitHub answers again: the old rule is read, and the merge waits for its approval.
    unreachable = "";
    reloaded.nudge("poll", "syncward");
    await reloaded.idle();
    assert.ok(events.some((e) => e.type === "awaitingApproval" && e.revision === merge));
    assert.equal(await settingsOf(ns), "1");
  });

  it("a state kept before the rules were recorded reads them from the deployed revision's config file", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, store, events, controller, controllerAtHead } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    await store.update(controller.instance, (s) => {
      s.deployedRules = undefined;
    });
    const merge = repo.commit({
      ".github/syncward.yml": configFile(ns, { syncPolicy: { automated: {} } }),
      "app/cm.yaml": cm("2"),
    });
    const reloaded = controllerAtHead();
    reloaded.nudge("merge", "mallory");
    await reloaded.idle();
    assert.ok(events.some((e) => e.type === "awaitingApproval" && e.revision === merge));
    assert.equal(await settingsOf(ns), "1");
  });
});

describe("nothing to approve when nothing changes", () => {
  it("a docs-only commit on a prod environment with approval advances without asking, and says 'no change'", async () => {
    const { ns, repo, store, events, controller } = await setup(
      { syncPolicy: { automated: {} }, approval: { users: ["carol"] } },
      { "app/cm.yaml": cm("1"), "README.md": "docs\n" },
    );
    const first = await controller.sync({ trigger: "cli", actor: "admin" });
    assert.equal(first.phase, "Succeeded", first.message);
    const docs = repo.commit({ "README.md": "more docs\n" });
    controller.nudge("push", "alice");
    await controller.idle();
    const state = await store.load(controller.instance);
    assert.equal(state.lastSyncedRevision, docs);
    assert.equal(state.pendingSync, undefined);
    assert.equal(state.history.at(-1)?.message, "no change for prod");
    assert.equal(state.history.at(-1)?.revision, docs);
    assert.ok(!events.some((e) => e.type === "awaitingApproval"), "nobody was asked");
    assert.ok(events.some((e) => e.type === "unchanged" && e.revision === docs));
    assert.equal(await settingsOf(ns), "1");

    // A commit that changes what is rendered still waits.
    const change = repo.commit({ "app/cm.yaml": cm("2") });
    controller.nudge("push", "alice");
    await controller.idle();
    assert.ok(events.some((e) => e.type === "awaitingApproval" && e.revision === change));
  });
});

describe("a config change that loosens the gate and renders nothing new (third review, A)", () => {
  it("a commit that only adds a trusted bot to an automated gated prod waits for approval instead of advancing as 'no change'", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, store, events, controller, controllerAtHead } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    const merge = repo.commit({
      ".github/syncward.yml": configFile(ns, {
        ...gated,
        approval: { users: ["carol"], trustedBots: ["acme-release[bot]"] },
      }),
    });
    const reloaded = controllerAtHead();
    reloaded.nudge("merge", "mallory");
    await reloaded.idle();
    const state = await store.load(reloaded.instance);
    assert.notEqual(state.lastSyncedRevision, merge, "not advanced as 'no change'");
    assert.deepEqual(state.deployedRules?.approval?.trustedBots, [], "the deployed rules trust no bot");
    assert.ok(!events.some((e) => e.type === "unchanged"));
    const waiting = events.find((e) => e.type === "awaitingApproval" && e.revision === merge);
    assert.ok(waiting && waiting.type === "awaitingApproval");
    assert.match(waiting.reason ?? "", /trusted bots added: acme-release\[bot\]/);
  });
});

describe("'no change' skips only the approval", () => {
  it("a docs-only commit whose required checks have not passed does not become the deployed revision", async () => {
    let failing: string[] = [];
    const checks: RequiredChecks = { missing: async () => failing };
    const { store, events, repo, controller } = await setup(
      { syncPolicy: { automated: {} }, approval: { users: ["carol"] }, requireChecks: ["ci/test"] },
      { "app/cm.yaml": cm("1"), "README.md": "docs\n" },
      (s) => s,
      checks,
    );
    const first = await controller.sync({ trigger: "cli", actor: "admin" });
    assert.equal(first.phase, "Succeeded", first.message);
    failing = ["ci/test"];
    const docs = repo.commit({ "README.md": "more docs\n" });
    controller.nudge("push", "alice");
    await controller.idle();
    const state = await store.load(controller.instance);
    assert.equal(state.lastSyncedRevision, repo.git("rev-parse", "HEAD~1").trim(), "still the approved one");
    assert.ok(!events.some((e) => e.type === "unchanged"), "not advanced as 'no change'");
    assert.ok(
      events.some((e) => e.type === "waiting" || (e.type === "awaitingApproval" && e.revision === docs)),
      "it waits like any other revision",
    );
    // Once the checks pass, an equal render advances without an approval, as before.
    failing = [];
    controller.nudge("poll", "syncward");
    await controller.idle();
    assert.equal((await store.load(controller.instance)).lastSyncedRevision, docs);
    assert.ok(events.some((e) => e.type === "unchanged" && e.revision === docs));
  });
});

describe("a config change that re-renders the deployed commit", () => {
  it("is a new release for a gated environment: it waits for approval instead of being healed in", async () => {
    const gated = { syncPolicy: { automated: { selfHeal: true } }, approval: { users: ["carol"] } };
    const { ns, repo, store, events, controller, controllerFor } = await setup(gated, {
      "app/cm.yaml": cm("1"),
      "evil/cm.yaml": cm("evil"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    const deployed = repo.head();
    // The config as another branch's merge would bring it: the same commit, rendered from evil/.
    const moved = controllerFor(
      stringify({
        environments: [{ name: "prod", source: { path: "evil" }, destination: { namespace: ns }, ...gated }],
      }),
    );
    moved.nudge("poll", "syncward");
    await moved.idle();
    assert.equal(await settingsOf(ns), "1", "nothing applied from the new render without approval");
    assert.ok(!events.some((e) => e.type === "selfHealed"), "not healed in as drift");
    assert.ok(events.some((e) => e.type === "awaitingApproval" && e.revision === deployed));
    // A /sync of the deployed commit asks for approval too.
    const manual = await moved.sync({ trigger: "comment", actor: "mallory" });
    assert.notEqual(manual.phase, "Succeeded");
    assert.equal(await settingsOf(ns), "1");
    // Approved: it deploys, and the new settings are then the deployed ones.
    await moved.approve(deployed, "carol", 7);
    await moved.idle();
    assert.equal(await settingsOf(ns), "evil");
    assert.equal((await store.load(moved.instance)).lastSyncedRevision, deployed);
  });
});

describe("a new environment on a gated environment's destination", () => {
  it("inherits its approval: a config that adds prod-b with prod's namespace and no approval waits", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, events, controller, controllerFor } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    const takeover = repo.commit({ "app/cm.yaml": cm("2") });
    const sibling = controllerFor(
      stringify({
        environments: [
          {
            name: "prod-b",
            source: { path: "app" },
            destination: { namespace: ns },
            syncPolicy: { automated: {} },
          },
        ],
      }),
      "prod-b",
    );
    sibling.nudge("push", "mallory");
    await sibling.idle();
    assert.equal(await settingsOf(ns), "1", "prod's objects not taken over without approval");
    assert.ok(
      events.some((e) => e.type === "awaitingApproval" && e.env === "prod-b" && e.revision === takeover),
    );
  });
});

describe("an environment that may write a gated environment's namespace (third review, B)", () => {
  it("a new `tools` environment with policy.namespaces [tools, prod's] inherits prod's approval: prod's object unchanged, a wait announced", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, store, events, controller, controllerFor } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    const tools = await cluster.namespace("rgate-tools");
    const takeover = repo.commit({
      "tools/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ${ns}}\ndata: {v: "evil"}\n`,
    });
    const config = stringify({
      environments: [
        { name: "prod", source: { path: "app" }, destination: { namespace: ns }, ...gated },
        {
          name: "tools",
          source: { path: "tools" },
          destination: { namespace: tools },
          policy: { namespaces: [tools, ns] },
          syncPolicy: { automated: {} },
        },
      ],
    });
    const neighbour = controllerFor(config, "tools");
    neighbour.nudge("push", "mallory");
    await neighbour.idle();
    assert.equal(await settingsOf(ns), "1", "prod's object not taken over without approval");
    const waiting = events.find(
      (e) => e.type === "awaitingApproval" && e.env === "tools" && e.revision === takeover,
    );
    assert.ok(waiting && waiting.type === "awaitingApproval", "a wait is announced");
    assert.match(waiting.reason ?? "", new RegExp(`may write namespace ${ns} of gated environment`));
    assert.equal((await neighbour.rules()).approval?.users[0], "carol", "prod's approvers");
    assert.equal((await store.load(neighbour.instance)).lastSyncedRevision, undefined);
  });
});

describe("approvals are of the configuration they were given under (third review, C)", () => {
  it("approved while frozen, then a config change moves prod's source, then unfreeze: nothing applied, the wait asks for approval again", async () => {
    const gated = { syncPolicy: { automated: {} }, approval: { users: ["carol"] } };
    const { ns, repo, events, controller, controllerFor } = await setup(gated, {
      "app/cm.yaml": cm("1"),
    });
    await controller.sync({ trigger: "cli", actor: "admin" });
    const next = repo.commit({ "app/cm.yaml": cm("2"), "evil/cm.yaml": cm("evil") });
    controller.nudge("push", "alice");
    await controller.idle();
    await controller.setFreeze({ by: "mallory", reason: "hold" });
    const approved = await controller.approve(next, "carol", 3, repo.git("rev-parse", "HEAD~1").trim());
    assert.match(approved.refused ?? "", /^refused: frozen by @mallory/);
    // A merged change of prod's source (the app rebuilds the controller with the new config).
    const moved = controllerFor(
      stringify({
        environments: [{ name: "prod", source: { path: "evil" }, destination: { namespace: ns }, ...gated }],
      }),
    );
    await moved.setFreeze(undefined);
    moved.nudge("poll", "syncward");
    await moved.idle();
    assert.equal(await settingsOf(ns), "1", "nothing deployed under a configuration nobody approved");
    const again = events.filter((e) => e.type === "awaitingApproval" && e.revision === next).at(-1);
    assert.ok(again && again.type === "awaitingApproval");
    assert.match(
      again.reason ?? "",
      /1 approval\(s\) were given under another configuration of prod .*: approve again/,
    );
    // Approved under the new configuration: it deploys.
    await moved.approve(next, "carol", 3, repo.git("rev-parse", "HEAD~1").trim());
    await moved.idle();
    await eventually("the approved release deployed", async () => (await settingsOf(ns)) === "evil");
  });
});

describe("refusals are told where the request was made", () => {
  it("an approval that completes the approvals of a frozen environment is answered with the refusal, and nothing runs", async () => {
    const { ns, repo, events, controller } = await setup(
      { approval: { users: ["carol"] } },
      { "app/cm.yaml": cm("1") },
    );
    await controller.sync({ trigger: "cli", actor: "admin" });
    const next = repo.commit({ "app/cm.yaml": cm("2") });
    const { held } = await controller.requestApprovedSync({ trigger: "comment", actor: "alice" });
    assert.equal(held, true);
    await controller.setFreeze({ by: "dave", reason: "incident 7" });
    const result = await controller.approve(next, "carol", 3);
    assert.equal(result.released, false);
    assert.match(result.refused ?? "", /^refused: frozen by @dave since .* \(incident 7\)/);
    const refused = events.find((e) => e.type === "refused");
    assert.ok(refused && refused.type === "refused" && refused.revision === next);
    assert.match(refused.outcome.message, /frozen by @dave/);
    await controller.idle();
    assert.equal(await settingsOf(ns), "1");

    // A Sync button or /sync on the frozen environment is refused before anything is started.
    const asked = await controller.requestApprovedSync({ trigger: "comment", actor: "alice" });
    assert.match(asked.refused ?? "", /^refused: frozen by @dave/);
  });

  it("a sync handed over by another replica just before a freeze is refused by the lease holder's gate", async () => {
    const { ns, repo, store, events, controller } = await setup({}, { "app/cm.yaml": cm("1") });
    // What a replica without the lease writes after its own gate said yes; then someone freezes.
    await store.update(controller.instance, (s) => {
      s.handedOver = {
        revision: repo.head(),
        trigger: "comment",
        actor: "alice",
        requestedAt: new Date().toISOString(),
      };
    });
    await controller.setFreeze({ by: "dave", reason: "incident 9" });
    controller.nudge("poll", "syncward");
    await controller.idle();
    assert.equal(await settingsOf(ns), undefined, "nothing applied");
    const refused = events.find((e) => e.type === "refused");
    assert.ok(refused && refused.type === "refused" && refused.actor === "alice");
    assert.match(refused.outcome.message, /^refused: frozen by @dave .*\(incident 9\)/);
    assert.equal((await store.load(controller.instance)).handedOver, undefined, "run once, not again");
  });
});

describe("requireChecks", () => {
  it("deploys a revision only once its required checks passed on it, and says which are missing", async () => {
    // What GitHub would answer (its adapter is tested against GitHub's API in test/app/required-checks.test.ts).
    let failing = ["ci/test"];
    const asked: string[] = [];
    const checks: RequiredChecks = {
      missing: async (sha, wanted) => {
        asked.push(sha);
        assert.deepEqual(wanted, ["ci/test", "ci/lint"]);
        return failing;
      },
    };
    const { ns, repo, store, events, controller } = await setup(
      { syncPolicy: { automated: {} }, requireChecks: ["ci/test", "ci/lint"] },
      { "app/cm.yaml": cm("1") },
      (s) => s,
      checks,
    );
    const head = repo.head();
    controller.nudge("push", "alice");
    await controller.idle();
    const waiting = events.find((e) => e.type === "waiting");
    assert.ok(waiting && waiting.type === "waiting");
    assert.equal(waiting.reason, `waiting for checks to pass on ${head.slice(0, 7)}: ci/test`);
    assert.equal(await settingsOf(ns), undefined, "nothing applied before the checks passed");
    assert.deepEqual(asked, [head]);
    // A person's sync is refused the same way, with the reason.
    const manual = await controller.sync({ trigger: "comment", actor: "alice" });
    assert.match(manual.message, /waiting for checks to pass on [0-9a-f]{7}: ci\/test/);

    failing = [];
    controller.nudge("poll", "syncward");
    await controller.idle();
    assert.equal(await settingsOf(ns), "1");
    assert.equal((await store.load(controller.instance)).lastSyncedRevision, head);
  });
});

describe("operator floors", () => {
  it("SYNCWARD_MIN_PRODUCTION_APPROVALS holds a production environment whose config asks for no approval", async () => {
    const ns = await cluster.namespace("rfloor");
    const stateNs = await cluster.stateNamespace("rfloor-state");
    const repo = makeRepo({ "app/cm.yaml": cm("1") });
    const events: ReconcilerEvent[] = [];
    const config = parseConfig(
      stringify({
        environments: [
          {
            name: "prod",
            production: true,
            source: { path: "app" },
            destination: { namespace: ns },
            syncPolicy: { automated: {} },
          },
        ],
      }),
    );
    const reconciler = reconcilerFor("floor", config, repo.dir, stateNs, {
      emit: (e) => events.push(e),
      floors: floorsFromEnv({ SYNCWARD_MIN_PRODUCTION_APPROVALS: "1" }),
    });
    const prod = reconciler.controller("prod");
    assert.equal(prod.env.approval?.minimum, 1);
    prod.nudge("push", "alice");
    await prod.idle();
    assert.ok(events.some((e) => e.type === "awaitingApproval" && e.revision === repo.head()));
    assert.equal(await settingsOf(ns), undefined, "nothing deployed without the floor's approval");
  });
});

describe("who pushed a revision waiting for approval", () => {
  it("a push event that arrives after a poll announced the wait records the pusher; one that arrives first is recorded with the wait", async () => {
    const ns = await cluster.namespace("rpusher");
    const stateNs = await cluster.stateNamespace("rpusher-state");
    const repo = makeRepo({ "app/cm.yaml": cm("1") });
    const store = new StateStore(cluster.syncwardClient, stateNs);
    const config = parseConfig(
      configFile(ns, { syncPolicy: { automated: {} }, approval: { users: ["carol"] } }),
    );
    const reconciler = reconcilerFor("pusher", config, repo.dir, stateNs);
    const prod = reconciler.controller("prod");
    const pending = async () => (await store.load(prod.instance)).pendingSync;

    // A poll finds the commit before its push event: the wait knows no pusher.
    const first = repo.head();
    prod.nudge("poll", "syncward");
    await prod.idle();
    assert.equal((await pending())?.revision, first);
    assert.equal((await pending())?.pusher, undefined, "a poll does not know who pushed");
    // The push event arrives: its pusher is recorded on the wait, so approvers are checked against them.
    reconciler.nudgeBranch("main", "push", "bob", undefined, { revision: first });
    await eventually(
      "the late push event's pusher is recorded",
      async () => (await pending())?.pusher === "bob",
    );
    await prod.idle();
    assert.equal((await pending())?.actor, "syncward");

    // The usual order: the push event first, then the wait it starts, which names the pusher.
    const second = repo.commit({ "app/cm.yaml": cm("2") });
    reconciler.nudgeBranch("main", "merge", "dave", undefined, { revision: second });
    await prod.idle();
    assert.deepEqual(
      { revision: (await pending())?.revision, pusher: (await pending())?.pusher },
      { revision: second, pusher: "dave" },
    );
  });
});

describe("who pushed, kept in the environment's state", () => {
  it("a push received by one replica reaches a wait another (a restarted one) announces, with the pusher's id", async () => {
    const ns = await cluster.namespace("rpushed");
    const stateNs = await cluster.stateNamespace("rpushed-state");
    const repo = makeRepo({ "app/cm.yaml": cm("1"), "docs/a.md": "a" });
    const store = new StateStore(cluster.syncwardClient, stateNs);
    const config = parseConfig(
      configFile(ns, { syncPolicy: { automated: {} }, approval: { users: ["carol"] } }),
    );
    const head = repo.head();
    // The replica that receives the push: prod's files are not touched by the file list it is
    // told of, so it starts no pass; it records who pushed in prod's state all the same.
    const receiver = reconcilerFor("pushed", config, repo.dir, stateNs);
    const instance = receiver.controller("prod").instance;
    receiver.nudgeBranch(
      "main",
      "push",
      "bob",
      { files: ["docs/a.md"], includes: () => ["app"] },
      { revision: head, actorId: 4711 },
    );
    await eventually(
      "the push is in the state",
      async () => (await store.load(instance)).recentPushes?.some((p) => p.after === head) ?? false,
    );
    // Another process, which never saw the push event, finds the commit by polling.
    const restarted = reconcilerFor("pushed", config, repo.dir, stateNs);
    const prod = restarted.controller("prod");
    prod.nudge("poll", "syncward");
    await prod.idle();
    const pending = (await store.load(instance)).pendingSync;
    assert.deepEqual(
      { revision: pending?.revision, pusher: pending?.pusher, pusherId: pending?.pusherId },
      { revision: head, pusher: "bob", pusherId: 4711 },
    );
  });
});

describe("approvals recorded before the deployed revision moves", () => {
  it("an approval judged against another last synced revision stops counting after a CLI rollback: the range grew, so it must be given again", async () => {
    const { ns, repo, store, controller } = await setup(
      { syncPolicy: { automated: {} }, approval: { users: ["carol", "dave"], minimum: 2 } },
      { "app/cm.yaml": cm("1") },
    );
    const cli = (revision: string) =>
      controller.sync({ trigger: "cli", actor: "ops", revision, needsApproval: false });
    const first = repo.head();
    await cli(first);
    const second = repo.commit({ "app/cm.yaml": cm("2") });
    await cli(second);
    const third = repo.commit({ "app/cm.yaml": cm("3") });
    controller.nudge("push", "alice");
    await controller.idle();
    assert.equal((await store.load(controller.instance)).pendingSync?.revision, third);
    // carol was judged against second..third (a range without `second`).
    const carol = await controller.approve(third, "carol", 3, second);
    assert.deepEqual(carol.approvers, ["carol"]);

    // An operator rolls prod back: what an approval of `third` would deploy now includes `second`.
    await cli(first);
    assert.equal((await store.load(controller.instance)).lastSyncedRevision, first);
    const dave = await controller.approve(third, "dave", 4, first);
    assert.deepEqual(
      { approvers: dave.approvers, released: dave.released },
      { approvers: ["dave"], released: false },
      "carol's approval no longer counts",
    );
    await controller.idle();
    assert.equal(await settingsOf(ns), "1", "nothing deployed on an approval judged against another range");
    const held = await controller.sync({ trigger: "comment", actor: "erin", needsApproval: true });
    assert.match(
      held.held && !held.held.allowed ? held.held.reason : "",
      /^waiting for approval \(1\/2\); 1 approval\(s\) were given when prod last synced another revision, and what would be deployed has changed since: approve again/,
    );

    // Judged again against the range as it is now, carol's approval counts and `third` deploys.
    const again = await controller.approve(third, "carol", 3, first);
    assert.equal(again.released, true);
    await eventually("the approved revision deployed", async () => (await settingsOf(ns)) === "3");
  });
});

describe("approvals are of one operation", () => {
  it("/sync --prune on a partly approved automated wait starts the approvals again: the next one does not release a prune", async () => {
    const { ns, repo, store, controller } = await setup(
      { syncPolicy: { automated: {} }, approval: { users: ["carol", "dave"], minimum: 2 } },
      { "app/cm.yaml": cm("1") },
    );
    await controller.sync({ trigger: "cli", actor: "ops", needsApproval: false });
    const next = repo.commit({ "app/cm.yaml": cm("2") });
    controller.nudge("push", "alice");
    await controller.idle();
    assert.equal((await store.load(controller.instance)).pendingSync?.revision, next);
    assert.deepEqual((await controller.approve(next, "carol", 3)).approvers, ["carol"]);

    const asked = await controller.requestApprovedSync({ trigger: "comment", actor: "erin", prune: true });
    assert.equal(asked.held, true);
    const state = await store.load(controller.instance);
    assert.equal(state.pendingSync?.prune, true, "the wait is now the prune sync erin asked for");
    assert.deepEqual(state.pendingApprovals, [], "carol approved the sync without prune, not this one");
    const dave = await controller.approve(next, "dave", 4);
    assert.deepEqual(
      { approvers: dave.approvers, released: dave.released },
      { approvers: ["dave"], released: false },
    );
    await controller.idle();
    assert.equal(await settingsOf(ns), "1", "nothing deployed");
  });
});

describe("approvals given under allowAuthor: true", () => {
  it("stop counting once the rule is false: who contributed was never looked at", async () => {
    const { ns, repo, store, controller } = await setup(
      { syncPolicy: { automated: {} }, approval: { users: ["carol", "dave"], minimum: 2 } },
      { "app/cm.yaml": cm("1") },
    );
    await controller.sync({ trigger: "cli", actor: "ops", needsApproval: false });
    const next = repo.commit({ "app/cm.yaml": cm("2") });
    controller.nudge("push", "alice");
    await controller.idle();
    const base = (await store.load(controller.instance)).lastSyncedRevision ?? "";
    // Given while the config said allowAuthor: true (the approval layer checked no contributor).
    const carol = await controller.approve(next, "carol", 3, base, true);
    assert.deepEqual(carol.approvers, []);
    const dave = await controller.approve(next, "dave", 4, base);
    assert.deepEqual(
      { approvers: dave.approvers, released: dave.released },
      { approvers: ["dave"], released: false },
    );
    const held = await controller.sync({ trigger: "comment", actor: "erin", needsApproval: true });
    assert.match(
      held.held && !held.held.allowed ? held.held.reason : "",
      /^waiting for approval \(1\/2\); 1 approval\(s\) were given while approval\.allowAuthor was true, without checking who contributed: approve again/,
    );
    await controller.idle();
    assert.equal(await settingsOf(ns), "1");
  });
});

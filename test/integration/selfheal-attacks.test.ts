// Self-heal as a security control, on the real control plane with the controller running: each
// attack is made with kubectl as a person with write access would, against a Deployment Git
// declares with one container and no securityContext. Each is reverted (live read back equals Git
// plus server defaults), the heal's history entry names the path and the field manager, and the
// environment reads Synced again. Trusted managers' fields are left alone.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { parse } from "yaml";
import { compareObjects } from "../../src/engine/diff/index.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import type { HistoryEntry } from "../../src/state/types.ts";
import { ATTACKS, type Live, WEB_YAML } from "../support/attacks.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

async function start(
  files: Record<string, string>,
  fields: Record<string, unknown>,
  client = cluster.syncwardClient,
) {
  const ns = await cluster.namespace("attack");
  const stateNs = await cluster.stateNamespace("attack-state");
  const repo = makeRepo(files);
  const events: ReconcilerEvent[] = [];
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const controller = new EnvironmentController({
    app: "shop",
    env: envConfig(ns, { source: { path: "deploy" }, ...fields }),
    client,
    store,
    source: new LocalGitSource(repo.dir, cache),
    emit: (e) => events.push(e),
    log: pino({ level: process.env.W12_LOG ?? "silent" }),
    pollIntervalMs: 0,
  });
  controller.start();
  return { ns, repo, events, store, controller };
}

const liveWeb = async (ns: string) => (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as Live;

/** Live equals what Git declares (`yaml`) plus server defaults: no difference, nothing anyone else added. */
async function matchesGit(ns: string, yaml = WEB_YAML): Promise<boolean> {
  const git = { ...(parse(yaml) as KubeObject) };
  git.metadata = { ...git.metadata, namespace: ns };
  return compareObjects(git, await liveWeb(ns)).inSync;
}

describe("self-heal reverts every kubectl attack at once", () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  before(async () => {
    ctx = await start(
      { "deploy/web.yaml": WEB_YAML },
      { syncPolicy: { automated: { prune: true, selfHeal: true } } },
    );
    await eventually(
      "first sync",
      async () => (await ctx.store.load(ctx.controller.instance)).syncStatus === "Synced",
    );
    await ctx.controller.idle();
  });
  after(() => ctx.controller.stop());

  for (const attack of ATTACKS) {
    it(`${attack.name}: reverted, recorded with path and manager, Synced after`, async () => {
      const { ns, store, controller, repo } = ctx;
      const seen = (await store.load(controller.instance)).history.length;
      attack.run(ns);
      const entry = await eventually(
        "a self-heal naming the change",
        async () =>
          (await store.load(controller.instance)).history
            .slice(seen)
            .find(
              (h: HistoryEntry) =>
                h.trigger === "selfHeal" && h.reverted?.some((r) => attack.path.test(r.path)),
            ),
        15_000,
      );
      await eventually("live equals Git again", () => matchesGit(ns), 15_000);
      const reverted = entry.reverted?.find((r) => attack.path.test(r.path));
      assert.equal(reverted?.manager, attack.manager, JSON.stringify(entry.reverted));
      assert.ok(reverted?.operation?.startsWith("Update"), reverted?.operation);
      assert.equal(entry.revision, repo.head(), "same revision as the sync");
      assert.equal(entry.result, "Succeeded", entry.message);
      if (attack.security) assert.match(reverted?.security ?? "", attack.security);
      else assert.equal(reverted?.security, undefined);
      assert.equal(attack.reverted(await liveWeb(ns)), true, "the attack's own change is gone");
      await controller.idle();
      const state = await store.load(controller.instance);
      assert.equal(state.syncStatus, "Synced");
      const { assessment } = await controller.inspect();
      assert.equal(assessment.plan.steps.length, 0, "app get finds nothing to sync");
    });
  }

  it("an env var value is masked in the history", async () => {
    const history = (await ctx.store.load(ctx.controller.instance)).history;
    const env = history.flatMap((h) => h.reverted ?? []).find((r) => r.path.includes("/env/"));
    assert.ok(env, "the env attack is in history");
    assert.doesNotMatch(JSON.stringify(history), /debug-leak/);
  });

  it("security-relevant reverts are in the selfHealed events (check run, metric, log)", () => {
    const flagged = ctx.events
      .flatMap((e) => (e.type === "selfHealed" ? (e.reverted ?? []) : []))
      .filter((r) => r.security)
      .map((r) => r.security);
    for (const expected of [/image changed/, /new container/, /privileged/, /hostPath/, /ServiceAccount/])
      assert.ok(
        flagged.some((f) => expected.test(f ?? "")),
        `${expected} in ${flagged.join("; ")}`,
      );
    assert.equal(
      ctx.events.some((e) => e.type === "driftFight"),
      false,
      "untrusted changes are reverted, never backed off",
    );
  });
});

/** A sidecar running privileged, hostPID and a hostPath volume of the node's root, in one patch. */
const SPOOF_PATCH = JSON.stringify({
  spec: {
    template: {
      spec: {
        hostPID: true,
        volumes: [{ name: "host", hostPath: { path: "/" } }],
        containers: [
          {
            name: "miner",
            image: "busybox:1",
            securityContext: { privileged: true },
            volumeMounts: [{ name: "host", mountPath: "/host" }],
          },
        ],
      },
    },
  },
});

// Git leaves the replica count to the autoscaler here.
const WEB_NO_REPLICAS = WEB_YAML.replace(/^ {2}replicas: \d+\n/m, "");

describe("a trusted manager's name proves nothing: spoofed changes are reverted and flagged", () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  before(async () => {
    ctx = await start(
      { "deploy/web.yaml": WEB_NO_REPLICAS },
      {
        // An HPA-like autoscaler trusted for the replica count, and nothing else.
        trustedManagers: [{ manager: "my-autoscaler", paths: ["/spec/replicas"] }],
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      },
    );
    await eventually(
      "first sync",
      async () => (await ctx.store.load(ctx.controller.instance)).syncStatus === "Synced",
    );
    await ctx.controller.idle();
  });
  after(() => ctx.controller.stop());

  for (const manager of ["kube-controller-manager", "syncward", "my-autoscaler"]) {
    it(`--field-manager=${manager}: the sidecar, hostPID and hostPath volume are reverted, each flagged as spoofing`, async () => {
      const { ns, store, controller } = ctx;
      const seen = (await store.load(controller.instance)).history.length;
      kubectl(["-n", ns, "patch", "deployment/web", `--field-manager=${manager}`, "-p", SPOOF_PATCH]);
      const entry = await eventually(
        "a self-heal flagging the spoofed manager",
        async () =>
          (await store.load(controller.instance)).history
            .slice(seen)
            .find((h: HistoryEntry) => h.trigger === "selfHeal" && h.reverted?.some((r) => r.spoofing)),
        15_000,
      );
      await eventually("live equals Git again", () => matchesGit(ns, WEB_NO_REPLICAS), 15_000);
      const reverted = entry.reverted ?? [];
      // The strategic merge patch puts the new container first (containers/0), Git's second.
      const found = (path: RegExp) =>
        reverted.find(
          (x) => path.test(x.path) && (!/containers/.test(String(path)) || x.value?.includes("miner")),
        );
      for (const path of [/\/containers\/\d+$/, /\/hostPID$/, /\/volumes$/]) {
        const r = found(path);
        assert.ok(r, `${path} in ${JSON.stringify(reverted)}`);
        assert.equal(r.manager, manager);
        assert.ok(r.security, `${r.path} is security-relevant`);
        assert.match(
          r.spoofing ?? "",
          manager === "syncward" ? /syncward's own name/ : new RegExp(`name ${manager}`),
        );
      }
      const live = await liveWeb(ns);
      assert.equal(live.spec.template.spec.containers.length, 1);
      assert.equal(JSON.stringify(live.spec.template.spec).includes("hostPID"), false);
      assert.equal(live.spec.template.spec.volumes, undefined);
      const flagged = ctx.events.filter(
        (e) => e.type === "selfHealed" && e.entry.id === entry.id && e.reverted?.some((r) => r.spoofing),
      );
      assert.equal(flagged.length, 1, "the selfHealed event (check run, log) carries the finding");
    });
  }

  it("the replica count under the HPA's manager name (scale subresource) stays trusted", async () => {
    const { ns, store, controller } = ctx;
    for (const manager of ["kube-controller-manager", "my-autoscaler"]) {
      const replicas = manager === "my-autoscaler" ? 4 : 3;
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--subresource=scale",
        `--field-manager=${manager}`,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { replicas } }),
      ]);
      await controller.idle();
      const { assessment } = await controller.inspect();
      assert.equal(assessment.plan.steps.length, 0, `${manager}'s replica count is not drift`);
      assert.equal((await liveWeb(ns)).spec.replicas, replicas);
    }
    const history = (await store.load(controller.instance)).history;
    assert.equal(
      history.flatMap((h) => h.reverted ?? []).some((r) => r.path === "/spec/replicas"),
      false,
    );
  });
});

describe("trusted managers and admission are not drift", () => {
  it("an autoscaler named in trustedManagers owns the replica count Git leaves out", async () => {
    const noReplicas = WEB_YAML.replace(/^ {2}replicas: \d+\n/m, "");
    const { ns, store, controller } = await start(
      { "deploy/web.yaml": noReplicas },
      { trustedManagers: ["my-autoscaler"], syncPolicy: { automated: { selfHeal: true } } },
    );
    try {
      await eventually(
        "first sync",
        async () => (await store.load(controller.instance)).syncStatus === "Synced",
      );
      await controller.idle();
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--subresource=scale",
        "--field-manager=my-autoscaler",
        "--type=merge",
        "-p",
        '{"spec":{"replicas":4}}',
      ]);
      // Something a person does afterwards is still reverted at once: the watch is alive.
      kubectl(["-n", ns, "patch", "deployment/web", "--type=json", "-p", PRIVILEGED]);
      await eventually("the privileged flag reverted", async () => {
        const live = await liveWeb(ns);
        return !JSON.stringify(live.spec.template.spec).includes("privileged");
      });
      await controller.idle();
      assert.equal((await liveWeb(ns)).spec.replicas, 4, "the autoscaler's replica count stays");
      const history = (await store.load(controller.instance)).history;
      assert.equal(
        history.flatMap((h) => h.reverted ?? []).some((r) => r.path === "/spec/replicas"),
        false,
      );
    } finally {
      await controller.stop();
    }
  });

  it("ignoreDifferences managedFieldsManagers leaves a declared replica count to that manager", async () => {
    const { ns, store, controller } = await start(
      { "deploy/web.yaml": WEB_YAML },
      {
        ignoreDifferences: [{ group: "apps", kind: "Deployment", managedFieldsManagers: ["my-autoscaler"] }],
        syncPolicy: { automated: { selfHeal: true } },
      },
    );
    try {
      await eventually(
        "first sync",
        async () => (await store.load(controller.instance)).syncStatus === "Synced",
      );
      await controller.idle();
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--subresource=scale",
        "--field-manager=my-autoscaler",
        "--type=merge",
        "-p",
        '{"spec":{"replicas":5}}',
      ]);
      await new Promise((r) => setTimeout(r, 1500));
      await controller.idle();
      assert.equal((await liveWeb(ns)).spec.replicas, 5);
      const state = await store.load(controller.instance);
      assert.equal(state.history.filter((h) => h.trigger === "selfHeal").length, 0);
      assert.equal(state.syncStatus, "Synced");
    } finally {
      await controller.stop();
    }
  });

  it("a Secret with `data: {key: null}` in Git reads Synced after its sync (null declares nothing)", async () => {
    const secret =
      "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {user: YWRtaW4=, unset: null}\n";
    const { store, controller } = await start(
      { "deploy/secret.yaml": secret },
      { syncPolicy: { automated: { selfHeal: true } } },
    );
    try {
      await eventually("first sync", async () => (await store.load(controller.instance)).lastSyncedRevision);
      await controller.idle();
      const { assessment } = await controller.inspect();
      assert.deepEqual(
        assessment.plan.steps.flatMap((st) => st.tasks.map((t) => `${t.key} ${t.drifted.join(",")}`)),
        [],
      );
      const state = await store.load(controller.instance);
      assert.equal(state.syncStatus, "Synced");
      assert.equal(state.history.length, 1, "no heal");
    } finally {
      await controller.stop();
    }
  });

  it("a bare Pod whose list admission extended (default tolerations) reads Synced", async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  tolerations: [{key: dedicated, operator: Exists}]
  containers: [{name: c, image: "nginx:1.27"}]
`;
    // deploy/'s role does not manage bare Pods: this one runs as cluster-admin.
    const { ns, store, controller } = await start(
      { "deploy/pod.yaml": pod },
      { syncPolicy: { automated: { selfHeal: true } } },
      cluster.client,
    );
    try {
      await eventually("first sync", async () => (await store.load(controller.instance)).lastSyncedRevision);
      await controller.idle();
      const live = (await cluster.client.get("v1", "Pod", ns, "bare")) as KubeObject & {
        spec: { tolerations: unknown[] };
      };
      assert.ok(live.spec.tolerations.length > 1, "admission added tolerations to syncward's request");
      const { assessment } = await controller.inspect();
      assert.equal(assessment.plan.steps.length, 0, "nothing to sync");
      assert.equal((await store.load(controller.instance)).syncStatus, "Synced");
      assert.equal((await store.load(controller.instance)).history.length, 1, "no heal");
    } finally {
      await controller.stop();
    }
  });
});

describe("what cannot be reverted is said so, and stays OutOfSync", () => {
  it("an ephemeral container added by kubectl debug (immutable) fails the heal with a reason", async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  containers: [{name: c, image: "nginx:1.27"}]
`;
    const { ns, store, controller } = await start(
      { "deploy/pod.yaml": pod },
      { syncPolicy: { automated: { selfHeal: true } } },
      cluster.client,
    );
    try {
      await eventually(
        "first sync",
        async () => (await store.load(controller.instance)).syncStatus === "Synced",
      );
      await controller.idle();
      kubectl(["-n", ns, "debug", "pod/bare", "--image=busybox:1", "-c", "dbg", "--profile=general"]);
      const heal = await eventually(
        "a failed heal",
        async () => (await store.load(controller.instance)).history.find((h) => h.trigger === "selfHeal"),
        15_000,
      );
      assert.equal(heal.result, "Failed");
      assert.match(heal.message, /cannot remove \/spec\/ephemeralContainers \(kubectl\)/);
      assert.deepEqual(
        heal.reverted?.map((r) => [r.path, r.manager, r.operation, r.security]),
        [
          [
            "/spec/ephemeralContainers",
            "kubectl",
            "Update ephemeralcontainers",
            "new container, image busybox:1, added capabilities",
          ],
        ],
      );
      await controller.idle();
      assert.equal((await store.load(controller.instance)).syncStatus, "OutOfSync");
      const { assessment } = await controller.inspect();
      assert.deepEqual(
        assessment.plan.steps.flatMap((st) => st.tasks.map((t) => t.drifted)),
        [["/spec/ephemeralContainers"]],
        "app get still shows the drift",
      );
    } finally {
      await controller.stop();
    }
  });
});

const PRIVILEGED =
  '[{"op":"add","path":"/spec/template/spec/containers/0/securityContext","value":{"privileged":true}}]';

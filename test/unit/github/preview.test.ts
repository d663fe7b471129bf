// Who gets a preview, of what, and what a preview may reveal: the pure parts of src/github/preview.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pino from "pino";
import { environmentDiff } from "../../../src/engine/environment-diff.ts";
import type { Plan } from "../../../src/engine/plan.ts";
import type { SyncResult } from "../../../src/engine/result.ts";
import {
  blindSecrets,
  forkPreviews,
  isForkPull,
  PreviewQueue,
  previewsEnabled,
} from "../../../src/github/preview.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { envConfig } from "../../support/env.ts";

describe("previewsEnabled", () => {
  const cases: Array<[string, Record<string, unknown>, boolean]> = [
    ["a plain environment", {}, true],
    ["production", { production: true }, false],
    ["gated by approval", { approval: { users: ["carol"] } }, false],
    ["production, opted in", { production: true, previews: true }, true],
    ["approval, opted in", { approval: { users: ["carol"] }, previews: true }, true],
    ["a plain environment, opted out", { previews: false }, false],
  ];
  for (const [name, fields, expected] of cases) {
    it(`${name}: ${expected ? "previewed" : "not previewed"}`, () => {
      assert.equal(previewsEnabled(envConfig("shop", fields)), expected);
    });
  }
});

describe("isForkPull", () => {
  it("same repository: not a fork", () => {
    assert.equal(isForkPull({ head: { repo: { id: 1 } }, base: { repo: { id: 1 } } }), false);
  });
  it("another repository: a fork", () => {
    assert.equal(isForkPull({ head: { repo: { id: 2 } }, base: { repo: { id: 1 } } }), true);
  });
  it("a head repository that was deleted: treated as a fork", () => {
    assert.equal(isForkPull({ head: { repo: null }, base: { repo: { id: 1 } } }), true);
  });
});

describe("forkPreviews (SYNCWARD_FORK_PREVIEWS)", () => {
  it("defaults to collaborators", () => assert.equal(forkPreviews({}), "collaborators"));
  it("takes never", () => assert.equal(forkPreviews({ SYNCWARD_FORK_PREVIEWS: "never" }), "never"));
  it("names the variable and the allowed values for anything else", () => {
    assert.throws(
      () => forkPreviews({ SYNCWARD_FORK_PREVIEWS: "always" }),
      /SYNCWARD_FORK_PREVIEWS="always" is not valid: use "never" or "collaborators"/,
    );
  });
});

describe("PreviewQueue", () => {
  const log = pino({ level: "silent" });

  it("runs one preview at a time, in order", async () => {
    const queue = new PreviewQueue(log);
    const seen: string[] = [];
    let running = 0;
    const job = (name: string) => async () => {
      running++;
      assert.equal(running, 1, "never two at once");
      await new Promise((r) => setTimeout(r, 5));
      seen.push(name);
      running--;
    };
    await Promise.all([
      queue.enqueue("#1", job("a")),
      queue.enqueue("#2", job("b")),
      queue.enqueue("#3", job("c")),
    ]);
    assert.deepEqual(seen, ["a", "b", "c"]);
  });

  it("a newer preview of a pull request replaces the one still waiting", async () => {
    const queue = new PreviewQueue(log);
    const seen: string[] = [];
    let release = () => {};
    const first = queue.enqueue("#1", () =>
      new Promise<void>((r) => (release = r)).then(() => void seen.push("1a")),
    );
    const stale = queue.enqueue("#2", async () => void seen.push("2-old"));
    const fresh = queue.enqueue("#2", async () => void seen.push("2-new"));
    await stale; // settles when replaced, before anything ran
    assert.deepEqual(seen, []);
    assert.equal(queue.size, 1, "one waiting for #2");
    release();
    await Promise.all([first, fresh]);
    assert.deepEqual(seen, ["1a", "2-new"]);
  });

  it("past its capacity the oldest waiting pull request is dropped", async () => {
    const queue = new PreviewQueue(log, 2);
    const seen: string[] = [];
    let release = () => {};
    const busy = queue.enqueue("#0", () => new Promise<void>((r) => (release = r)));
    const waits = ["#1", "#2", "#3"].map((k) => queue.enqueue(k, async () => void seen.push(k)));
    assert.equal(queue.size, 2);
    release();
    await Promise.all([busy, ...waits]);
    assert.deepEqual(seen, ["#2", "#3"]);
  });

  it("a failing preview rejects its own caller only; the queue goes on", async () => {
    const queue = new PreviewQueue(log);
    const failing = queue.enqueue("#1", async () => {
      throw new Error("cluster away");
    });
    const next = queue.enqueue("#2", async () => {});
    await assert.rejects(failing, /cluster away/);
    await next;
  });
});

const secret = (values: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "shop", ...extra },
  stringData: values,
});

function planWith(tasks: Array<{ obj: KubeObject; live?: KubeObject }>, unchanged: typeof tasks = []): Plan {
  return {
    steps: [
      { phase: "Sync", wave: 0, tasks: tasks.map((t) => ({ ...t, action: t.live ? "update" : "create" })) },
    ],
    unchanged: unchanged.map((t) => ({ ...t, action: "update" })),
    prunes: [],
    requiresPruning: [],
    onFail: [],
  } as unknown as Plan;
}

const dryRun = (resources: SyncResult["resources"]): SyncResult => ({
  revision: "a".repeat(40),
  phase: "Succeeded",
  message: "would apply 1 object, 0 unchanged, 0 to prune",
  resources,
  startedAt: "",
  finishedAt: "",
  totals: { created: 0, configured: 1, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
  writes: 0,
  dryRun: true,
});

describe("previews never tell whether a Secret value equals the live one", () => {
  const live = { ...secret({ password: "hunter2" }), data: { password: "aHVudGVyMg==" } };
  delete (live as { stringData?: unknown }).stringData;
  const guessedRight = secret({ password: "hunter2" });
  const guessedWrong = secret({ password: "letmein" });

  it("the diff reads the same for a right and a wrong guess", () => {
    const env = envConfig("shop");
    const right = environmentDiff(planWith([{ obj: guessedRight, live }]), env, { blindSecrets: true });
    const wrong = environmentDiff(planWith([{ obj: guessedWrong, live }]), env, { blindSecrets: true });
    assert.equal(right, wrong);
    assert.doesNotMatch(wrong, /hunter2|letmein|aHVudGVyMg/);
  });

  it("without blindSecrets (the CLI, for people with cluster access) the masks differ as in Argo CD", () => {
    const env = envConfig("shop");
    const right = environmentDiff(planWith([{ obj: guessedRight, live }]), env);
    const wrong = environmentDiff(planWith([{ obj: guessedWrong, live }]), env);
    assert.notEqual(right, wrong);
  });

  it("a new key still shows (key names are not secret)", () => {
    const text = environmentDiff(
      planWith([{ obj: secret({ password: "x", token: "y" }), live }]),
      envConfig("shop"),
      { blindSecrets: true },
    );
    assert.match(text, /token/);
    assert.doesNotMatch(text, /\by\b.*\n/);
  });

  it("the result lists every existing Secret alike, changed or not, and counts without them", () => {
    const changed = blindSecrets(
      dryRun([
        {
          group: "",
          kind: "Secret",
          namespace: "shop",
          name: "db",
          status: "OutOfSync",
          action: "configured",
          drifted: ["/data/password"],
          message: "secret/db configured (dry run)",
        },
      ]),
      planWith([{ obj: guessedWrong, live }]),
    );
    const same = blindSecrets(
      { ...dryRun([]), totals: { ...dryRun([]).totals, configured: 0 }, message: "would apply 0 objects" },
      planWith([], [{ obj: guessedRight, live }]),
    );
    assert.deepEqual(changed.resources, same.resources);
    assert.deepEqual(changed.totals, same.totals);
    assert.equal(changed.message, same.message);
    assert.equal(changed.resources[0]?.message, "secret/db: values are not compared in previews");
    assert.equal(changed.totals.configured, 0);
  });

  it("a Secret to create is still shown as created", () => {
    const created = blindSecrets(
      dryRun([
        {
          group: "",
          kind: "Secret",
          namespace: "shop",
          name: "db",
          status: "OutOfSync",
          action: "created",
          message: "secret/db created (dry run)",
        },
      ]),
      planWith([{ obj: guessedWrong }]),
    );
    assert.equal(created.resources.length, 1);
    assert.equal(created.resources[0]?.action, "created");
    assert.equal(created.totals.created, 1);
  });
});

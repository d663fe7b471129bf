// A release top to bottom, on the paths that end before the cluster is written to (the gate, the
// render, the branch): which steps ran, in which order, and what was recorded or answered.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EnvironmentConfig } from "../../../../src/config/types.ts";
import type { SyncOutcome } from "../../../../src/engine/sync.ts";
import type { EnvironmentEffects } from "../../../../src/reconciler/effects.ts";
import type { GateRequest } from "../../../../src/reconciler/gate.ts";
import type { GateDecision } from "../../../../src/reconciler/gate-decision.ts";
import { syncRevision } from "../../../../src/reconciler/sync-operation.ts";
import { SourceError } from "../../../../src/source/errors.ts";
import type { RenderedSource } from "../../../../src/source/render.ts";
import type { EnvironmentState, Trigger } from "../../../../src/state/types.ts";
import { envConfig } from "../../../support/env.ts";

const HEAD = "a".repeat(40);
const NEWER = "b".repeat(40);

interface Fake {
  fx: EnvironmentEffects;
  asked: GateRequest[];
  rendered: string[];
  recorded: Array<{ trigger: Trigger; outcome: SyncOutcome; state: EnvironmentState; retried: number }>;
  answered: Array<{ decision: GateDecision; path: string }>;
  events: string[];
}

function fake(opts: {
  env?: EnvironmentConfig;
  gate?: (r: GateRequest) => GateDecision;
  /** What rendering a revision gives, per call (default: a SourceError). */
  render?: (sha: string, call: number) => Error | RenderedSource;
  branch?: string;
}): Fake {
  const env = opts.env ?? envConfig("dev");
  const f: Omit<Fake, "fx"> = { asked: [], rendered: [], recorded: [], answered: [], events: [] };
  const state = (): EnvironmentState => ({
    environment: "app.dev",
    syncStatus: "Synced",
    history: [],
    pendingApprovals: [],
    selfHeals: {},
  });
  const fx = {
    instance: "app.dev",
    writing: new Set<AbortController>(),
    hooks: { stopped: () => false, wakeAt: () => {} },
    o: {
      env,
      store: { load: async () => state() },
      source: { head: async () => opts.branch ?? HEAD },
      log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
      emit: (e: { type: string }) => f.events.push(e.type),
    },
    gate: {
      check: async (r: GateRequest) => {
        f.asked.push(r);
        return { ...(opts.gate?.(r) ?? { allowed: true }), rules: env, state: state() };
      },
    },
    desiredAt: async (sha: string) => {
      f.rendered.push(sha);
      const r = opts.render?.(sha, f.rendered.length) ?? new SourceError("no render in this test");
      if (r instanceof Error) throw r;
      return r;
    },
    heldBy: async (decision: GateDecision, outcome: SyncOutcome, path: string) => {
      f.answered.push({ decision, path });
      return { ...outcome, held: decision };
    },
    record: async (
      trigger: Trigger,
      _actor: string,
      outcome: SyncOutcome,
      mutate: (s: EnvironmentState) => void,
      _drifted: unknown,
      retried: { retried: unknown[] },
    ) => {
      const s = state();
      mutate(s);
      f.recorded.push({ trigger, outcome, state: s, retried: retried.retried.length });
      return { state: s, entry: {} };
    },
  };
  return { ...f, fx: fx as unknown as EnvironmentEffects };
}

const retrying = (refresh: boolean): EnvironmentConfig => {
  const env = envConfig("dev");
  return {
    ...env,
    syncPolicy: {
      ...env.syncPolicy,
      retry: { limit: 1, backoff: { duration: 1, factor: 1, maxDuration: 1 }, refresh },
    },
  };
};
const RENDERED: RenderedSource = { objects: [], files: new Map(), lines: new Map(), renderer: "directory" };
const FROZEN: GateDecision = { allowed: false, check: "freeze", reason: "refused: frozen by @alice" };
const unreachable = () => Object.assign(new Error("Bad Gateway"), { status: 502 });

describe("a release that ends before its first write", () => {
  it("refused by the gate: asked once with the revision, state and render; answered, nothing recorded", async () => {
    const f = fake({ render: () => RENDERED, gate: () => FROZEN });
    const outcome = await syncRevision(f.fx, HEAD, "comment", "bob", { prune: false, path: "manual" });
    assert.equal(outcome.phase, "Refused");
    assert.equal(outcome.message, "refused: frozen by @alice");
    assert.deepEqual(
      f.asked.map((r) => [r.path, r.revision, r.actor, r.wait, Boolean(r.state), r.render?.count]),
      [["manual", HEAD, "bob", undefined, true, 0]],
    );
    assert.equal(f.answered[0]?.decision, outcome.held);
    assert.equal(f.answered[0]?.path, "manual");
    assert.deepEqual(f.recorded, []);
    assert.deepEqual(f.events, []);
  });

  it("the automated pass asks with its wait for approval", async () => {
    const f = fake({ render: () => RENDERED, gate: () => FROZEN });
    await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.deepEqual(f.asked[0]?.wait, { manual: false, prune: true });
    assert.equal(f.answered[0]?.path, "automated");
  });

  it("a bad signature is recorded as stuck, not answered", async () => {
    const f = fake({
      render: () => RENDERED,
      gate: () => ({ allowed: false, check: "signature", reason: "refused: not signed" }),
    });
    const outcome = await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.equal(outcome.phase, "Refused");
    assert.deepEqual(f.answered, []);
    assert.equal(f.recorded[0]?.state.stuck?.reason, "refused: not signed");
    assert.deepEqual(f.events, ["synced", "stuck"]);
  });

  it("a retry the gate stops (a freeze meanwhile) is recorded as a retry, not held as stuck", async () => {
    const f = fake({
      env: retrying(false),
      render: (_sha, call) => (call === 1 ? unreachable() : RENDERED),
      gate: (r) => (r.path === "retry" ? FROZEN : { allowed: true }),
    });
    const outcome = await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.equal(outcome.phase, "Refused");
    assert.deepEqual(
      f.asked.map((r) => r.path),
      ["retry"],
    );
    assert.deepEqual(f.answered, []);
    assert.equal(f.recorded[0]?.trigger, "retry");
    assert.equal(f.recorded[0]?.state.stuck, undefined);
    assert.deepEqual(f.events, ["synced"]);
  });

  it("a render error is recorded as stuck at the revision, and said so", async () => {
    const f = fake({});
    const outcome = await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.equal(outcome.phase, "Error");
    assert.equal(outcome.message, "render failed: no render in this test");
    assert.deepEqual(f.rendered, [HEAD]);
    assert.equal(f.recorded[0]?.trigger, "push");
    assert.equal(f.recorded[0]?.state.stuck?.revision, HEAD);
    assert.deepEqual(f.events, ["synced", "stuck"]);
    assert.equal(f.fx.writing.size, 0);
  });

  it("a source that cannot be fetched is retried, recorded, and not held as stuck", async () => {
    const f = fake({ env: retrying(false), render: unreachable });
    const outcome = await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.equal(outcome.phase, "Failed");
    assert.match(outcome.message, /^fetching aaaaaaa failed: Bad Gateway \(gave up after 2 attempts\)$/);
    assert.deepEqual(f.rendered, [HEAD, HEAD]);
    assert.equal(f.recorded[0]?.trigger, "retry");
    assert.equal(f.recorded[0]?.retried, 1);
    assert.equal(f.recorded[0]?.state.stuck, undefined);
    assert.deepEqual(f.events, ["synced"]);
  });

  it("with retry.refresh a retry moves to the branch's newest revision the gate lets through", async () => {
    const f = fake({ env: retrying(true), render: unreachable, branch: NEWER });
    const outcome = await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.deepEqual(f.rendered, [HEAD, NEWER]);
    assert.deepEqual(
      f.asked.map((r) => [r.path, r.revision]),
      [["refresh", NEWER]],
    );
    assert.equal(outcome.revision, NEWER);
  });

  it("with retry.refresh, a newest revision the gate refuses: the retry stays", async () => {
    const f = fake({
      env: retrying(true),
      render: unreachable,
      branch: NEWER,
      gate: (r) =>
        r.path === "refresh"
          ? { allowed: false, check: "approval", reason: "refused: not approved" }
          : { allowed: true },
    });
    await syncRevision(f.fx, HEAD, "push", "alice", { prune: true, path: "automated" });
    assert.deepEqual(f.rendered, [HEAD, HEAD]);
  });

  it("a revision a person named is retried as named, refresh or not", async () => {
    const f = fake({ env: retrying(true), render: unreachable, branch: NEWER });
    await syncRevision(f.fx, HEAD, "cli", "alice", { prune: true, path: "manual", pinned: true });
    assert.deepEqual(f.rendered, [HEAD, HEAD]);
    assert.deepEqual(f.asked, []);
  });
});

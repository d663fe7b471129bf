// Self-heal: re-applies the drifted objects of the deployed revision, after the gate (a freeze
// or a deny window with selfHeal: false stops it), and counts heals per object to spot fights.
// When watch events named the objects that changed, only those are compared and healed
// (healNamed); the environment's full pass still runs at its interval for what watches miss.
import { compareOptionsFor, revertTrail } from "../engine/revert/index.ts";
import { type Assessment, assess, syncEnvironment } from "../engine/sync.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import type { RenderedSource } from "../source/render.ts";
import type { EnvironmentState } from "../state/types.ts";
import type { PassInput } from "./decide.ts";
import { driftFight, healBackoffMs, isFight, nextHealAt, recordHeal } from "./drift-fight.ts";
import type { EnvironmentEffects } from "./effects.ts";
import { type RenderSeen, renderSeen } from "./render-binding.ts";

const SHORT = (sha: string) => sha.slice(0, 7);

/**
 * Whether a pass may heal just the objects watch events named instead of assessing the whole
 * environment: self-heal is on and not held, the head is the deployed revision, and the state
 * says everything else was in sync (otherwise the full pass heals or reports all of it at once).
 */
export function mayHealNamed(input: Pick<PassInput, "policy" | "state" | "head" | "healHeld">): boolean {
  const { policy, state, head } = input;
  return (
    policy.automated &&
    policy.selfHeal &&
    !input.healHeld &&
    head === state.lastSyncedRevision &&
    state.syncStatus === "Synced"
  );
}

/**
 * More named objects than this (a sync's own writes, a burst of edits) are read the usual way, a
 * list per kind, by the full pass: fewer requests than a GET each.
 */
const MAX_NAMED = 32;

/**
 * Compares only the named objects (a GET each) with their desired form at the deployed revision,
 * and heals those that drifted, through the same gate, fight counting and history as a full
 * pass. False when it cannot stand in for a full pass: a named object the render does not
 * declare (a new or renamed object, a hook), which only the full pass's view can judge.
 */
export async function healNamed(
  fx: EnvironmentEffects,
  head: string,
  rendered: RenderedSource,
  named: ReadonlySet<string>,
  state: EnvironmentState,
): Promise<boolean> {
  if (named.size > MAX_NAMED) return false;
  const namespace = fx.o.env.destination.namespace;
  const declared = new Map<string, KubeObject>();
  for (const o of rendered.objects) {
    declared.set(keyString(keyOf(o)), o);
    // A namespaced object declared without a namespace lands in the destination's.
    if (!o.metadata.namespace)
      declared.set(keyString(keyOf({ ...o, metadata: { ...o.metadata, namespace } })), o);
  }
  const objects = [...named].map((key) => declared.get(key));
  if (objects.some((o) => o === undefined)) return false;
  const subset = { ...rendered, objects: objects as KubeObject[] };
  // Prune is off: nothing but the named objects is read, so nothing may be judged extraneous.
  const request = fx.request(head, subset.objects, false, state, { readEach: true });
  const assessment = await assess(fx.o.client, fx.target, request);
  const assessed = new Set(assessment.tracked.map((o) => keyString(keyOf(o))));
  if (assessed.size !== named.size || [...named].some((key) => !assessed.has(key))) return false;
  const drifted = assessment.plan.steps.flatMap((s) => s.tasks);
  if (drifted.length === 0) return true;
  await heal(
    fx,
    head,
    subset,
    drifted.map((t) => ({ key: t.key, paths: t.drifted, live: assessment.live.get(t.key), obj: t.obj })),
    false,
    state,
    assessment,
    renderSeen(rendered.objects, fx.o.env.destination.namespace),
  );
  return true;
}

/** Re-applies only the drifted objects; counts heals per object to spot drift fights. */
export async function heal(
  fx: EnvironmentEffects,
  head: string,
  rendered: RenderedSource,
  drifted: Array<{ key: string; paths: string[]; live?: KubeObject; obj?: KubeObject }>,
  prune: boolean,
  state: EnvironmentState,
  /** The pass's assessment that found the drift, of the same revision, objects and prune. */
  assessment?: Assessment,
  /** The whole render `rendered` was taken from (healNamed passes a part of it). */
  seen: RenderSeen = renderSeen(rendered.objects, fx.o.env.destination.namespace),
): Promise<void> {
  const options = compareOptionsFor(fx.o.env);
  const trails = new Map(
    drifted.map((d) => [d.key, d.live && d.obj ? revertTrail(d.key, d.obj, d.live, options) : []]),
  );
  // Backing off is for fights with trusted managers: an untrusted change is reverted at once, every time.
  const untrusted = (key: string) => trails.get(key)?.some((r) => !r.trusted) ?? false;
  const fought = (key: string) => trails.get(key)?.some((r) => r.trusted) ?? true;
  // The policy may have changed while this pass looked (a freeze from the CLI or another
  // replica): the gate looks again right before writing, so a frozen environment is never healed.
  // It is shown the render: a gated environment's render that differs from the approved one is
  // a new release, announced as waiting for approval and never healed.
  const gate = await fx.gate.check({
    path: "selfHeal",
    revision: head,
    trigger: "selfHeal",
    actor: "syncward",
    render: seen,
    wait: { manual: false, prune },
  });
  if (!gate.allowed) return;
  const fresh = gate.state;
  const now = Date.now();
  const due = drifted.filter((d) => untrusted(d.key) || nextHealAt(fresh.selfHeals[d.key]) <= now);
  const later = drifted.filter((d) => !due.includes(d));
  if (later.length > 0)
    fx.hooks.wakeAt(new Date(Math.min(...later.map((d) => nextHealAt(fresh.selfHeals[d.key])))));
  if (due.length === 0) return;
  const fields = due.flatMap((d) =>
    d.paths.length > 0 ? d.paths.map((p) => `${d.key} ${p}`) : [`${d.key} (missing)`],
  );
  const reverted = due.flatMap((d) => trails.get(d.key) ?? []);
  const outcome = await syncEnvironment(
    fx.o.client,
    fx.target,
    fx.request(head, rendered.objects, prune, state, {
      only: new Set(due.map((d) => d.key)),
      ...(assessment ? { assessment } : {}),
    }),
  );
  const fights: Array<{
    key: string;
    paths: string[];
    live?: KubeObject;
    heals: number;
    backoffMs: number;
  }> = [];
  const { entry } = await fx.record(
    "selfHeal",
    "syncward",
    outcome,
    (s) => {
      for (const d of due) {
        if (!fought(d.key)) continue;
        const counter = recordHeal(s.selfHeals[d.key], head, new Date());
        s.selfHeals[d.key] = counter;
        if (isFight(counter))
          fights.push({ ...d, heals: counter.times.length, backoffMs: healBackoffMs(counter) });
      }
      s.syncStatus = outcome.phase === "Succeeded" ? "Synced" : "OutOfSync";
    },
    fields,
    undefined,
    reverted.length > 0 ? { reverted } : {},
  );
  const risky = reverted.filter((r) => r.security);
  if (risky.length > 0)
    fx.o.log.warn(
      { instance: fx.instance, revision: head, reverted: risky, result: outcome.phase },
      `self-heal reverted security-relevant changes: ${risky.map((r) => `${r.object} ${r.path} (${r.security}) by ${r.manager ?? "an unknown manager"}`).join("; ")}`,
    );
  fx.o.log.info(
    { instance: fx.instance, revision: head, drifted: fields, result: outcome.phase },
    "self-heal",
  );
  fx.o.emit({
    type: "selfHealed",
    instance: fx.instance,
    env: fx.o.env.name,
    revision: head,
    drifted: fields,
    outcome,
    entry,
    reverted,
  });
  for (const f of fights) {
    const fight = driftFight(f);
    fx.o.log.warn(
      { instance: fx.instance, ...fight },
      `drift fight: ${fight.object} healed ${f.heals} times at ${SHORT(head)}; changed by ${fight.managers.join(", ") || "an unknown manager"}`,
    );
    fx.o.emit({
      type: "driftFight",
      instance: fx.instance,
      env: fx.o.env.name,
      revision: head,
      fight,
    });
  }
}

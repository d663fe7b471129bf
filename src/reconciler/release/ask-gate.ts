// Step 3 of a release: the gate, immediately before the first write, with the exact revision and
// render to be applied. Which path an attempt asks on, and what a decision does to the release,
// are pure (gatePath, afterGate, answeredByGate); the gate itself is gate.ts.
import type { SyncOutcome } from "../../engine/sync.ts";
import { outcomeWithoutWork } from "../../engine/sync.ts";
import type { EnvironmentState } from "../../state/types.ts";
import type { GateRequest } from "../gate.ts";
import type { GateDecision, WritePath } from "../gate-decision.ts";
import type { RenderSeen } from "../render-binding.ts";
import type { Release } from "./release.ts";

/** The gate, asked on the release's behalf (its trigger, actor and the request's overrides). */
export function ask(
  r: Release,
  path: WritePath,
  revision: string,
  wait?: GateRequest["wait"],
  read?: EnvironmentState,
  render?: RenderSeen,
) {
  return r.fx.gate.check({
    path,
    revision,
    trigger: r.trigger,
    actor: r.actor,
    ignoreFreeze: r.opts.ignoreFreeze,
    needsApproval: r.opts.needsApproval,
    wait,
    state: read,
    ...(render ? { render } : {}),
  });
}

/** The first attempt asks on the request's path; a retry as a retry, or as a refresh when it moved. */
export function gatePath(n: number, requested: WritePath, moves: boolean): WritePath {
  return n === 1 ? requested : moves ? "refresh" : "retry";
}

/** Only the automated pass records a wait when approval is missing; a person's request is answered where it was made (fx.heldBy). */
export function waitOf(path: WritePath, prune: boolean): GateRequest["wait"] {
  return path === "automated" ? { manual: false, prune } : undefined;
}

/** A decision's effect on the attempt: stopped before its first write, or the rules it runs under. */
export function afterGate<R>(
  decision: GateDecision & { rules: R },
  revision: string,
): { held: GateDecision & { allowed: false }; outcome: SyncOutcome } | { rules: R } {
  if (!decision.allowed)
    return { held: decision, outcome: outcomeWithoutWork(revision, "Refused", decision.reason) };
  return { rules: decision.rules };
}

/**
 * Stopped by the gate before anything was written, on its first attempt: nothing to record, the
 * request hears why (fx.heldBy). A bad signature is recorded like a failure; a retry the gate
 * stopped (a freeze meanwhile) is recorded, but not held as stuck (stoppedByGate).
 */
export function answeredByGate(
  held: (GateDecision & { allowed: false }) | undefined,
  attempts: number,
): (GateDecision & { allowed: false }) | undefined {
  return stoppedByGate(held) && attempts === 1 ? held : undefined;
}

/** The gate (not the revision) stopped the last attempt: a bad signature is the revision's fault. */
export function stoppedByGate(held: (GateDecision & { allowed: false }) | undefined): boolean {
  return Boolean(held && held.check !== "signature");
}

/**
 * Asks the gate for attempt `n` (not for a dry run, which writes nothing); a refusal ends the
 * attempt. Sets `r.held` when refused, else `r.rules`.
 */
export async function askGate(
  r: Release,
  n: number,
  moves: boolean,
  revision: string,
  seen: RenderSeen,
): Promise<SyncOutcome | undefined> {
  if (r.opts.dryRun) return undefined;
  const path = gatePath(n, r.opts.path, moves);
  const decision = await ask(r, path, revision, waitOf(path, r.opts.prune), r.state, seen);
  const after = afterGate(decision, revision);
  if ("held" in after) {
    r.held = after.held;
    return after.outcome;
  }
  const stop = await firstWrite(r, decision.allowed ? (decision.approvals ?? []) : []);
  if (stop) {
    r.held = stop;
    return outcomeWithoutWork(revision, "Refused", stop.reason);
  }
  r.rules = after.rules;
  return undefined;
}

/**
 * The release's opts.beforeFirstWrite, once, with the approvals the gate counted (a retry's gate
 * counts none: a release whose first attempt never reached the gate is then refused, failing
 * closed). A reason is held like the gate's `pin` check.
 */
async function firstWrite(
  r: Release,
  approvals: readonly string[],
): Promise<(GateDecision & { allowed: false }) | undefined> {
  if (!r.opts.beforeFirstWrite || r.cleared) return undefined;
  const reason = await r.opts.beforeFirstWrite(approvals);
  if (reason) return { allowed: false, check: "pin", reason };
  r.cleared = true;
  return undefined;
}

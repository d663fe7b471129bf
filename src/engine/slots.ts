// The shape of a sync operation: its phases (PreSync, Sync, PostSync) and their waves, each wave
// holding the resources to apply and the hooks to run there. Pure, so the order has table tests.
import { PHASE_ORDER } from "./hooks/annotations.ts";
import type { HookTask } from "./hooks/plan.ts";
import type { ApplyStep } from "./plan.ts";

export interface Slot {
  /** 0 PreSync, 1 Sync, 2 PostSync. */
  phase: number;
  wave: number;
  steps: ApplyStep[];
  hooks: HookTask[];
}

export function slotsOf(steps: ApplyStep[], hooks: HookTask[]): Slot[] {
  const slots = new Map<string, Slot>();
  const slot = (phase: number, wave: number) => {
    const key = `${phase}|${wave}`;
    let s = slots.get(key);
    if (!s) {
      s = { phase, wave, steps: [], hooks: [] };
      slots.set(key, s);
    }
    return s;
  };
  for (const step of steps) slot(step.phase, step.wave).steps.push(step);
  for (const hook of hooks) {
    if (hook.phase === "SyncFail") continue;
    slot(PHASE_ORDER[hook.phase], hook.wave).hooks.push(hook);
  }
  return [...slots.values()].sort((a, b) => a.phase - b.phase || a.wave - b.wave);
}

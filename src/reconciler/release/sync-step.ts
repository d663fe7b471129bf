// Step 4 of a release: the sync itself (engine/sync.ts) at the chosen revision and render, under
// the rules the gate judged it by; its plan and waves show on the sync's live check run.

import type { Plan } from "../../engine/plan.ts";
import { type SyncOutcome, syncEnvironment } from "../../engine/sync.ts";
import type { HookMode } from "../../engine/types.ts";
import type { RenderedSource } from "../../source/render.ts";
import type { Trigger } from "../../state/types.ts";
import { plannedLines } from "../history-entry.ts";
import type { Release } from "./release.ts";

/** Triggers of a sync nobody asked for: a new revision found by a push, a merge, a poll or a promotion. */
const AUTOMATIC = new Set<Trigger>(["push", "merge", "poll", "promotion"]);

/** Hooks run on every sync someone asked for; a new revision runs them when it changes something. */
export function hookModeOf(trigger: Trigger): HookMode {
  return AUTOMATIC.has(trigger) ? "ifChanged" : "always";
}

/** Where each object is declared, so a failure can name the file and line. */
export function originsOf(rendered: RenderedSource): Map<string, string> {
  return new Map([...rendered.files].map(([key, file]) => [key, `${file}:${rendered.lines.get(key) ?? 1}`]));
}

/** How many writes a plan makes: every task of every step, and every prune. */
export function changesOf(plan: Plan): number {
  return plan.steps.reduce((n, st) => n + st.tasks.length, 0) + plan.prunes.length;
}

export function syncStep(r: Release, revision: string, rendered: RenderedSource): Promise<SyncOutcome> {
  const { fx, opts } = r;
  const env = r.env;
  return syncEnvironment(
    fx.o.client,
    { ...fx.target, env: r.rules },
    fx.request(revision, rendered.objects, opts.prune, r.state, {
      force: opts.force,
      dryRun: opts.dryRun,
      overridePruneLimit: opts.overridePruneLimit,
      allowEmpty: opts.allowEmpty,
      confirmPrune: opts.confirmPrune,
      hooks: hookModeOf(r.trigger),
      origins: originsOf(rendered),
      onProgress: (event) => {
        opts.onProgress?.(event);
        // Each wave that starts shows on the sync's live check run (the reporter throttles).
        if (event.type === "wave" && !opts.dryRun)
          fx.o.emit({
            type: "syncProgress",
            instance: fx.instance,
            env: env.name,
            revision,
            wave: event.wave,
            objects: event.objects,
          });
      },
      signal: r.signal,
      onPlan: (plan) => {
        if (opts.dryRun) return;
        fx.o.emit({
          type: "syncStarted",
          instance: fx.instance,
          env: env.name,
          revision,
          trigger: r.lastTrigger,
          actor: r.actor,
          changes: changesOf(plan),
          planned: plannedLines(plan),
        });
      },
    }),
  );
}

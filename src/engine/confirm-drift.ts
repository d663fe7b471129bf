// Subset comparison can see drift where the API server only normalizes what Git wrote: an empty
// `clusterIP: ""` it fills in, a value it canonicalizes. When Git has not changed since the last
// apply (same hash) and no list item was added live, a server-side dry-run apply tells exactly
// what applying would produce; if that equals live at every differing path, nothing would change.
// Real drift (an edited replica count, a swapped image) survives the check; an added sidecar is
// never cleared this way, since a dry run keeps other managers' list items.
import type { KubeClient } from "../kube/client.ts";
import { mapLimit } from "../util/map-limit.ts";
import { deepEqual } from "./diff/deep-equal.ts";
import { parsePointer } from "./diff/json-pointer.ts";
import type { ApplyTask, Plan } from "./plan.ts";

function at(root: unknown, pointer: string): unknown {
  let node = root;
  for (const token of parsePointer(pointer)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

export async function confirmDrift(
  client: KubeClient,
  plan: Plan,
  fieldValidation: "Strict" | "Ignore",
): Promise<Plan> {
  const candidates = plan.steps
    .flatMap((s) => s.tasks)
    .filter(
      (t) =>
        t.action === "update" &&
        t.live &&
        !t.gitChanged &&
        !t.extraItems &&
        !t.sharedWith &&
        t.drifted.length > 0,
    );
  if (candidates.length === 0) return plan;
  // Per task, the paths that really differ once the server has had its say.
  const real = new Map<ApplyTask, string[]>();
  await mapLimit(candidates, 8, async (task) => {
    try {
      const predicted = await client.apply(task.obj, { dryRun: true, fieldValidation });
      real.set(
        task,
        task.drifted.filter((p) => !deepEqual(at(predicted, p), at(task.live, p))),
      );
    } catch {
      // The dry run failing says nothing about drift: keep the task as it is, the apply reports.
    }
  });
  if (real.size === 0) return plan;
  const refine = (t: ApplyTask): ApplyTask =>
    real.has(t) ? { ...t, drifted: real.get(t) ?? t.drifted, dryRunPassed: fieldValidation } : t;
  const cleared = (t: ApplyTask) => real.get(t)?.length === 0;
  return {
    ...plan,
    steps: plan.steps
      .map((s) => ({ ...s, tasks: s.tasks.filter((t) => !cleared(t)).map(refine) }))
      .filter((s) => s.tasks.length > 0),
    unchanged: [
      ...plan.unchanged,
      ...candidates.filter(cleared).map((t) => ({ ...t, action: "unchanged" as const, drifted: [] })),
    ],
  };
}

// `syncward app promote <ENV>`: deploys the commit the environment's upstream runs now, once the
// upstream has proven it (promotion.after, healthyFor, checks). Like `app sync`, the CLI needs no
// approval: its user holds the cluster's credentials. Exit 1 when nothing was promoted.
import type { EnvironmentController } from "../../reconciler/environment-controller.ts";
import { short } from "../../util/short-sha.ts";
import { type CliIO, EXIT } from "../io.ts";

export async function promoteVerb(
  controller: EnvironmentController,
  actor: string,
  io: CliIO,
  print?: (value: unknown) => void,
): Promise<number> {
  const name = controller.env.name;
  const result = await controller.promote({
    trigger: "cli",
    actor,
    reason: `syncward app promote ${name} by ${actor}`,
    fromGitHub: false,
  });
  if (print) print(result);
  if ("refusal" in result) {
    if (!print) io.err(`app promote: ${result.refusal}`);
    return EXIT.different;
  }
  const ok = result.outcome?.phase === "Succeeded";
  if (!print) {
    io.out(`Promoted ${short(result.revision)} to ${name}: ${result.note.evidence.join(", ")}`);
    if (result.outcome)
      io.out(`Operation: ${result.outcome.phase} at ${short(result.revision)}: ${result.outcome.message}`);
    if (result.headWaits)
      io.out(`Still waiting: the branch head ${short(result.headWaits.head)} (${result.headWaits.waiting})`);
  }
  return ok ? EXIT.ok : EXIT.different;
}

type Told = { reason: string; evidence: string[] };

/**
 * History lines of the entries that carry a reason and evidence under `key` (promotions,
 * automatic rollbacks), for `app history`.
 */
export function evidenceLines(
  history: ReadonlyArray<{ id: number; promotion?: Told; autoRollback?: Told }>,
  key: "promotion" | "autoRollback",
): string[] {
  return history.flatMap((h) => {
    const told = h[key];
    return told ? [`${h.id}: ${told.reason}: ${told.evidence.join(", ")}`] : [];
  });
}

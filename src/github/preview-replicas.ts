// Which previews this replica should run a Reconciler for, from the records every replica reads.
// Each live preview has a Reconciler on every replica, as each repository does: its app Lease
// decides which one syncs and reports (the others stand by and hand pushes over), so a replica
// that dies hands the preview to another. A replica learns of a preview another one started when
// that one marks the preview's Lease (repository-announce.ts), and from the records at each sweep;
// it lets go of one whose record another replica ended. Pure:
// preview-manager.ts reads the records, asks this, and acts.
import type { PreviewPhase } from "../state/preview-store.ts";

export interface ReplicaFacts {
  /** The records as listed now. */
  records: Array<{ key: string; phase: PreviewPhase }>;
  /** The previews whose Reconciler runs here. */
  running: string[];
  /** Previews a step of this replica works on now (a webhook's, a report, a teardown). */
  busy: (key: string) => boolean;
}

export function replicaActions(facts: ReplicaFacts): { adopt: string[]; drop: string[] } {
  const live = new Set(facts.records.filter((r) => r.phase === "live").map((r) => r.key));
  const here = new Set(facts.running);
  // A step under way decides for itself: it may be starting or tearing down this very preview.
  const idle = (key: string) => !facts.busy(key);
  return {
    adopt: [...live].filter((k) => !here.has(k) && idle(k)),
    drop: [...here].filter((k) => !live.has(k) && idle(k)),
  };
}

// Reverting out-of-band changes: before syncward applies Git's manifest to an object that exists,
// what untrusted managers added is removed (server-side apply alone keeps it: it is theirs), and
// after the write the object the API server returned is checked, so no sync or heal reports
// success while drift it could see remains.
import type { EnvironmentConfig } from "../../config/types.ts";
import type { KubeClient } from "../../kube/client.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { type KubeObject, keyOf, kubectlName } from "../../kube/object.ts";
import { sleep } from "../../util/sleep.ts";
import { type CompareOptions, compareObjects, type Difference } from "../diff/index.ts";
import { OWN_MANAGER } from "../diff/trusted-managers.ts";
import { isRemoval, removalPatch } from "./removal-patch.ts";

/**
 * Reads and removals of one object before giving up for this pass (each re-read decides again): a
 * workload's controller writes its status a few times after each change, each a new resourceVersion,
 * so the tries are spread over a few seconds.
 */
const REMOVAL_TRIES = 8;

/** A change syncward saw and could not undo (an immutable field): the object stays OutOfSync. */
export class RevertError extends Error {
  override name = "RevertError";
}

export function compareOptionsFor(env: EnvironmentConfig): CompareOptions {
  return { ignoreDifferences: env.ignoreDifferences, trustedManagers: env.trustedManagers };
}

/** Differences made under names not trusted for them: additions, and values changed. */
export function untrustedDrift(desired: KubeObject, live: KubeObject, options: CompareOptions): Difference[] {
  return compareObjects(desired, live, options).differences.filter(
    (d) => isRemoval(d) || (d.kind === "changed" && (d.owners ?? []).some((o) => !o.trusted)),
  );
}

function describe(differences: Difference[]): string {
  return differences
    .map((d) => `${d.path}${d.owners?.length ? ` (${d.owners.map((o) => o.manager).join(", ")})` : ""}`)
    .join(", ");
}

/**
 * Removes what untrusted managers added to `live` (a JSON patch tested against its resourceVersion;
 * re-read and decided again if the object changed meanwhile). Returns the object as it now is.
 */
export async function removeForeignAdditions(
  client: KubeClient,
  desired: KubeObject,
  live: KubeObject,
  env: EnvironmentConfig,
): Promise<KubeObject | undefined> {
  const options = compareOptionsFor(env);
  let current: KubeObject | undefined = live;
  for (let attempt = 1; current; attempt++) {
    const removals = compareObjects(desired, current, options).differences.filter(isRemoval);
    const ops = removalPatch(
      current,
      removals.map((d) => d.path),
    );
    if (!ops) return current;
    const resource = await client.mustResource(current.apiVersion, current.kind);
    const path = client.objectPath(resource, current.metadata.namespace, current.metadata.name);
    try {
      return await client.request<KubeObject>("PATCH", `${path}?fieldManager=${OWN_MANAGER}`, {
        body: ops,
        contentType: "application/json-patch+json",
      });
    } catch (err) {
      if (!(err instanceof KubeApiError) || (err.status !== 422 && err.status !== 409)) throw err;
      // A failed `test` answers a bare 422 ("the server rejected our request..."): tell it from a
      // refused removal (an immutable field) by whether the object changed since it was read.
      const before: KubeObject = current;
      const { apiVersion, kind, metadata } = before;
      current = await client.get(apiVersion, kind, metadata.namespace, metadata.name);
      const stale = current?.metadata.resourceVersion !== metadata.resourceVersion;
      const name = kubectlName(keyOf(before));
      if (!stale) throw new RevertError(`${name}: cannot remove ${describe(removals)}: ${err.message}`);
      if (attempt >= REMOVAL_TRIES)
        throw new RevertError(
          `${name} kept changing while ${describe(removals)} was being removed (${REMOVAL_TRIES} tries); the next pass tries again`,
        );
      // A rollout's status writes come in a burst: a short, growing wait lets it pass (50 ms .. 1 s,
      // about 3.5 s in all; a loaded API server's rollout takes that long).
      await sleep(Math.min(50 * 2 ** (attempt - 1), 1_000));
    }
  }
  return undefined;
}

/** Throws when the object the API server returned for syncward's write still has untrusted drift. */
export function assertReverted(desired: KubeObject, after: KubeObject, env: EnvironmentConfig): KubeObject {
  // What syncward's own write came back with (admission included) under its own name is its
  // write's result, not an intrusion: only other names' drift is left undone.
  const remaining = untrustedDrift(desired, after, compareOptionsFor(env)).filter((d) =>
    (d.owners ?? []).some((o) => o.manager !== OWN_MANAGER),
  );
  if (remaining.length > 0)
    throw new RevertError(
      `${kubectlName(keyOf(desired))} still differs from Git after the write: ${describe(remaining)}`,
    );
  return after;
}

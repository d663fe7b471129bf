import type { KubeObject } from "../../kube/object.ts";
import { desiredHash } from "../tracking.ts";

/** One fingerprint of hooks as Git declares them: equal for equal declarations, in any order. */
export function hooksDigestOf(hooks: KubeObject[]): string {
  return desiredHash({
    apiVersion: "v1",
    kind: "List",
    metadata: { name: "hooks" },
    items: hooks.map((h) => desiredHash(h)).sort(),
  } as unknown as KubeObject);
}

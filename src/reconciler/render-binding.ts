// What an approval binds on a gated environment: the render (the objects a commit renders under
// its config), not only the commit. A render is not a function of the commit alone (a remote
// input, a chart repository, the cluster's version), so a later render of an approved commit that
// differs is a new release. Pure: the gate (gate.ts) asks these and is the one place that decides.
import { createHash } from "node:crypto";
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeObject } from "../kube/object.ts";
import { keyOf, keyString } from "../kube/object.ts";
import type { EnvironmentState } from "../state/types.ts";
import { canonical, renderDigest } from "./render-digest.ts";

/**
 * Objects named per render at most: beyond it only the digest is kept (the state is one
 * ConfigMap, whose 1 MiB also holds history), and a change is described by its count.
 */
export const NAMED_OBJECTS_KEPT = 200;

/** A render as the state keeps it: its digest and, for small renders, a short hash per object. */
export interface RenderSeen {
  digest: string;
  count: number;
  /**
   * Object key -> 12 hex digits of its content, Secrets left out (a hash of a Secret's values
   * kept beside its name would let a guess be checked); absent beyond NAMED_OBJECTS_KEPT.
   */
  objects?: Record<string, string>;
}

/** Whether approvals bind renders here: the environment asks for approval, or was deployed under a rule that did. */
export function bindsRender(
  env: Pick<EnvironmentConfig, "approval">,
  state: Pick<EnvironmentState, "deployedRules">,
): boolean {
  return Boolean(env.approval ?? state.deployedRules?.approval);
}

const seen = new WeakMap<readonly KubeObject[], RenderSeen>();

/** The render's summary, computed once per render (a pass reads the same render many times). */
export function renderSeen(objects: readonly KubeObject[]): RenderSeen {
  let s = seen.get(objects);
  if (!s) {
    s = { digest: renderDigest(objects), count: objects.length };
    if (objects.length <= NAMED_OBJECTS_KEPT)
      s.objects = Object.fromEntries(
        objects
          .filter((o) => o.kind !== "Secret")
          .map((o) => [
            keyString(keyOf(o)),
            createHash("sha256")
              .update(JSON.stringify(canonical(o)))
              .digest("hex")
              .slice(0, 12),
          ]),
      );
    seen.set(objects, s);
  }
  return s;
}

const LISTED = 5;

/** What differs between the approved render and this one, for the check run: object names only. */
export function describeRenderChange(approved: Partial<RenderSeen> | undefined, now: RenderSeen): string {
  const was = approved?.objects;
  if (!was || !now.objects) {
    const from = approved?.digest ? ` ${approved.digest.slice(0, 12)} ->` : "";
    return `its ${now.count} object(s) now render to digest${from} ${now.digest.slice(0, 12)}`;
  }
  const lines = [
    ...Object.keys(now.objects)
      .filter((k) => k in was && was[k] !== now.objects?.[k])
      .map((k) => `${k} changed`),
    ...Object.keys(now.objects)
      .filter((k) => !(k in was))
      .map((k) => `${k} added`),
    ...Object.keys(was)
      .filter((k) => !(k in (now.objects ?? {})))
      .map((k) => `${k} removed`),
  ];
  if (lines.length === 0) return "a Secret's content changed (its values are not shown)";
  const more = lines.length > LISTED ? `, and ${lines.length - LISTED} more` : "";
  return lines.slice(0, LISTED).join(", ") + more;
}

/**
 * The render the environment applied of its last synced revision, when `revision` is that one
 * and its render now is another: the deployed commit renders a new release. Undefined otherwise
 * (another revision, or a state that kept no digest).
 */
export function deployedRenderMoved(
  state: Pick<EnvironmentState, "lastSyncedRevision" | "renderedDigest" | "renderedObjects">,
  revision: string,
  render: RenderSeen | undefined,
): Partial<RenderSeen> | undefined {
  if (!render || state.lastSyncedRevision !== revision || state.renderedDigest === undefined)
    return undefined;
  if (state.renderedDigest === render.digest) return undefined;
  return {
    digest: state.renderedDigest,
    ...(state.renderedObjects ? { objects: state.renderedObjects } : {}),
  };
}

/**
 * Why approvals of `revision` do not bind `render`: some were given for another render of it
 * (the one the wait announced, kept in pendingSync). Undefined when none was.
 */
export function approvedRenderMoved(
  state: Pick<EnvironmentState, "pendingApprovals" | "pendingSync">,
  revision: string,
  render: RenderSeen | undefined,
): Partial<RenderSeen> | undefined {
  if (!render) return undefined;
  const other = state.pendingApprovals.find(
    (a) => a.sha === revision && a.render !== undefined && a.render !== render.digest,
  );
  if (!other) return undefined;
  const wait = state.pendingSync;
  return wait?.revision === revision && wait.render === other.render
    ? { digest: other.render, ...(wait.renderedObjects ? { objects: wait.renderedObjects } : {}) }
    : { digest: other.render };
}

/** The reason a gated environment waits for this render: "the render of abc1234 changed since it was approved: ...". */
export function renderChangedReason(
  revision: string,
  approved: Partial<RenderSeen>,
  now: RenderSeen,
): string {
  return `the render of ${revision.slice(0, 7)} changed since it was approved: ${describeRenderChange(approved, now)}`;
}

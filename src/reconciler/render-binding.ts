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

/**
 * Well-known cluster-scoped kinds. The render binding runs before discovery (prepare.ts), so an
 * object without a namespace is named in the destination namespace unless its kind is one of these
 * or a CustomResourceDefinition of the same render declares it cluster-scoped; any other kind is
 * taken as namespaced, as prepare.ts takes a kind not served yet.
 */
const CLUSTER_SCOPED = new Set([
  "/Namespace",
  "/Node",
  "/PersistentVolume",
  "/ComponentStatus",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "apiregistration.k8s.io/APIService",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
  "storage.k8s.io/StorageClass",
  "storage.k8s.io/CSIDriver",
  "storage.k8s.io/CSINode",
  "storage.k8s.io/VolumeAttachment",
  "scheduling.k8s.io/PriorityClass",
  "node.k8s.io/RuntimeClass",
  "networking.k8s.io/IngressClass",
  "certificates.k8s.io/CertificateSigningRequest",
  "flowcontrol.apiserver.k8s.io/FlowSchema",
  "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
]);

function clusterScopedCrdKinds(objects: readonly KubeObject[]): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind !== "CustomResourceDefinition") continue;
    const spec = (o as unknown as { spec?: { group?: string; scope?: string; names?: { kind?: string } } })
      .spec;
    if (spec?.scope === "Cluster" && spec.names?.kind) out.add(`${spec.group ?? ""}/${spec.names.kind}`);
  }
  return out;
}

/**
 * An object's key as it is applied: one that names no namespace lands in the destination
 * namespace (prepare.ts), so the check run names it there. Only the name: the content hash and
 * the digest are of the object as rendered, so they stay what earlier versions recorded.
 */
function appliedKey(o: KubeObject, destination: string, clusterCrds: Set<string>): string {
  const key = keyOf(o);
  if (key.namespace === "") {
    const kind = `${key.group}/${key.kind}`;
    if (!CLUSTER_SCOPED.has(kind) && !clusterCrds.has(kind)) key.namespace = destination;
  }
  return keyString(key);
}

/**
 * The render's summary, computed once per render (a pass reads the same render many times).
 * `destination`: the environment's destination namespace, where objects naming none are applied.
 */
export function renderSeen(objects: readonly KubeObject[], destination: string): RenderSeen {
  let s = seen.get(objects);
  if (!s) {
    const clusterCrds = clusterScopedCrdKinds(objects);
    s = { digest: renderDigest(objects), count: objects.length };
    if (objects.length <= NAMED_OBJECTS_KEPT)
      s.objects = Object.fromEntries(
        objects
          .filter((o) => o.kind !== "Secret")
          .map((o) => [
            appliedKey(o, destination, clusterCrds),
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

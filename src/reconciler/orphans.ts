// Objects in an environment's namespaces that no Git manifest declares and syncward does not
// manage. They are reported, with the risky ones flagged, and never touched: deleting what we did
// not create is how GitOps tools lose people's data.

import { HOOK_OF_LABEL } from "../engine/hooks/plan.ts";
import { managingInstance } from "../engine/tracking.ts";
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";

export interface Orphan {
  object: string;
  key: string;
  /** Why it deserves a look, when it does. */
  risk?: string;
}

const SCANNED: Array<[string, string]> = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["apps/v1", "DaemonSet"],
  ["batch/v1", "CronJob"],
  ["batch/v1", "Job"],
  ["v1", "Pod"],
  ["v1", "Service"],
  ["v1", "ConfigMap"],
  ["v1", "Secret"],
  ["v1", "ServiceAccount"],
  ["rbac.authorization.k8s.io/v1", "Role"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
];

/** Kinds an undeclared object of which can be risky: watched, so it is reported within seconds. */
export const RISKY_KINDS = SCANNED.filter(([, kind]) =>
  ["DaemonSet", "Deployment", "StatefulSet", "Job", "CronJob", "Pod", "RoleBinding"].includes(kind),
).map(([apiVersion, kind]) => ({ apiVersion, kind }));

/** An event worth a scan: an object nobody owns that this environment does not manage. */
export function mayBeOrphan(obj: KubeObject, instance: string): boolean {
  return !obj.metadata.ownerReferences?.length && managingInstance(obj) !== instance;
}

const POWERFUL_ROLES = new Set(["cluster-admin", "admin", "edit"]);

/** Objects every namespace has, created by Kubernetes itself. */
function isBuiltIn(obj: KubeObject): boolean {
  const name = obj.metadata.name;
  if (obj.kind === "ConfigMap" && name === "kube-root-ca.crt") return true;
  if (obj.kind === "ServiceAccount" && name === "default") return true;
  if (obj.kind === "Secret" && (obj as { type?: string }).type === "kubernetes.io/service-account-token")
    return true;
  return obj.kind === "Service" && name === "kubernetes" && obj.metadata.namespace === "default";
}

interface PodSpecLike {
  hostNetwork?: boolean;
  hostPID?: boolean;
  volumes?: Array<{ hostPath?: unknown }>;
  containers?: Array<{ securityContext?: { privileged?: boolean } }>;
  initContainers?: Array<{ securityContext?: { privileged?: boolean } }>;
}

function podSpecOf(obj: KubeObject): PodSpecLike | undefined {
  const spec = obj.spec as Record<string, unknown> | undefined;
  if (!spec) return undefined;
  if (obj.kind === "Pod") return spec as PodSpecLike;
  if (obj.kind === "CronJob") {
    return (spec.jobTemplate as { spec?: { template?: { spec?: PodSpecLike } } } | undefined)?.spec?.template
      ?.spec;
  }
  return (spec.template as { spec?: PodSpecLike } | undefined)?.spec;
}

interface Binding {
  roleRef: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/** Pure: why an object is risky, given the bindings in force. */
export function riskOf(obj: KubeObject, bindings: Binding[]): string | undefined {
  const reasons: string[] = [];
  if (obj.kind === "DaemonSet") reasons.push("a DaemonSet runs on every node");
  const pod = podSpecOf(obj);
  if (pod) {
    const containers = [...(pod.containers ?? []), ...(pod.initContainers ?? [])];
    if (containers.some((c) => c.securityContext?.privileged)) reasons.push("privileged container");
    if (pod.volumes?.some((v) => v.hostPath)) reasons.push("mounts a hostPath volume");
    if (pod.hostNetwork) reasons.push("uses the host network");
    if (pod.hostPID) reasons.push("shares the host PID namespace");
  }
  if (obj.kind === "RoleBinding" || obj.kind === "ClusterRoleBinding") {
    const ref = (obj as unknown as Binding).roleRef;
    if (ref && POWERFUL_ROLES.has(ref.name)) reasons.push(`binds the ${ref.name} role`);
  }
  if (obj.kind === "ServiceAccount") {
    const powerful = bindings.filter(
      (b) =>
        POWERFUL_ROLES.has(b.roleRef.name) &&
        b.subjects?.some(
          (s) =>
            s.kind === "ServiceAccount" &&
            s.name === obj.metadata.name &&
            s.namespace === obj.metadata.namespace,
        ),
    );
    if (powerful.length > 0)
      reasons.push(`bound to ${[...new Set(powerful.map((b) => b.roleRef.name))].join(", ")}`);
  }
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}

/** Cluster-wide bindings change rarely and every environment's scan needs them: read them once a minute. */
const bindingCache = new WeakMap<KubeClient, { at: number; items: Promise<KubeObject[]> }>();

function clusterRoleBindings(client: KubeClient): Promise<KubeObject[]> {
  const cached = bindingCache.get(client);
  if (cached && Date.now() - cached.at < 60_000) return cached.items;
  const items = client
    .list("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
    .then((l) => l.items)
    // Not allowed to read cluster bindings: ServiceAccount risk then covers namespaced bindings only.
    .catch(() => []);
  bindingCache.set(client, { at: Date.now(), items });
  return items;
}

export async function findOrphans(
  client: KubeClient,
  instance: string,
  namespaces: string[],
  declared: Set<string>,
): Promise<Orphan[]> {
  const found: KubeObject[] = [];
  await mapLimit(
    SCANNED.flatMap(([apiVersion, kind]) => namespaces.map((ns) => ({ apiVersion, kind, ns }))),
    8,
    async ({ apiVersion, kind, ns }) => {
      try {
        found.push(...(await client.list(apiVersion, kind, { namespace: ns })).items);
      } catch (err) {
        // A narrowed role may not allow listing every kind: report what we can see.
        if (!(err instanceof KubeApiError && err.status === 403)) throw err;
      }
    },
  );
  const clusterBindings = await clusterRoleBindings(client);
  const bindings = [
    ...found.filter((o) => o.kind === "RoleBinding"),
    ...clusterBindings,
  ] as unknown as Binding[];
  // Hooks a sync created (labelled HOOK_OF_LABEL) are operations, not undeclared state.
  return found
    .filter((o) => !o.metadata.ownerReferences?.length && !isBuiltIn(o))
    .filter((o) => !o.metadata.labels?.[HOOK_OF_LABEL])
    .filter((o) => !declared.has(keyString(keyOf(o))) && managingInstance(o) !== instance)
    .map((o) => {
      const risk = riskOf(o, bindings);
      const key = keyOf(o);
      return {
        object: `${kubectlName(key)} in ${key.namespace}`,
        key: keyString(key),
        ...(risk ? { risk } : {}),
      };
    })
    .sort((a, b) => Number(Boolean(b.risk)) - Number(Boolean(a.risk)) || a.key.localeCompare(b.key));
}

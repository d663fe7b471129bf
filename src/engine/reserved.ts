// Places no sync may write, whatever a repository's config or its project says: syncward's own
// namespace and its state namespace (its ConfigMaps, Leases, ServiceAccount, Role), the
// namespaces Kubernetes keeps for itself, the operator's list, and syncward's cluster-scoped
// objects (what deploy/ ships: its ClusterRoles and their bindings, its namespace, a webhook
// configuration of its name). One choke point: syncEnvironment hands every write path (apply,
// its dry runs, hooks, prune, self-heal, the CLI) a client whose write verbs refuse these, and
// prepare.ts names them before anything is written.
import type { KubeClient } from "../kube/client.ts";
import { groupOf, type KubeObject, type ResourceKey } from "../kube/object.ts";

export interface Reserved {
  namespaces: ReadonlySet<string>;
}

/** Namespaces Kubernetes keeps for itself, and syncward's own default. */
export const BUILT_IN_RESERVED = ["kube-system", "kube-public", "kube-node-lease", "syncward"] as const;

/**
 * The reserved set: the built-in namespaces, `extra` (the state namespace a caller uses), and from
 * the environment syncward's own namespace (SYNCWARD_NAMESPACE, POD_NAMESPACE), its state
 * namespace (SYNCWARD_STATE_NAMESPACE) and the operator's list (SYNCWARD_RESERVED_NAMESPACES,
 * comma-separated). Read at every sync, so no caller can forget one.
 */
export function reservedPlaces(
  extra: readonly string[] = [],
  vars: NodeJS.ProcessEnv = process.env,
): Reserved {
  const listed = (vars.SYNCWARD_RESERVED_NAMESPACES ?? "").split(",");
  const own = [vars.SYNCWARD_NAMESPACE, vars.POD_NAMESPACE, vars.SYNCWARD_STATE_NAMESPACE];
  const namespaces = new Set(
    [...BUILT_IN_RESERVED, ...extra, ...own, ...listed].map((n) => n?.trim() ?? "").filter((n) => n !== ""),
  );
  return { namespaces };
}

const RBAC = "rbac.authorization.k8s.io";
const WEBHOOKS = "admissionregistration.k8s.io";
const OWN_NAME = /^syncward($|-)/;

type Target = Pick<ResourceKey, "group" | "kind" | "namespace" | "name">;

/** Why a sync may not write `key` (namespace "" when cluster-scoped), or undefined. */
export function reservedProblem(reserved: Reserved, key: Target, what: string): string | undefined {
  if (key.namespace && reserved.namespaces.has(key.namespace))
    return `${what}: namespace "${key.namespace}" is reserved (syncward's own, its state's, Kubernetes' or the operator's): no sync writes there, whatever the project allows`;
  if (key.namespace) return undefined;
  if (key.group === "" && key.kind === "Namespace" && reserved.namespaces.has(key.name))
    return `${what}: namespace "${key.name}" is reserved: no sync creates, changes or deletes it`;
  const own =
    (key.group === RBAC && (key.kind === "ClusterRole" || key.kind === "ClusterRoleBinding")) ||
    (key.group === WEBHOOKS && key.kind.endsWith("WebhookConfiguration"));
  if (own && OWN_NAME.test(key.name))
    return `${what}: ${key.kind} "${key.name}" is syncward's own (names "syncward" and "syncward-*" of RBAC and webhook kinds are reserved): no sync writes it`;
  return undefined;
}

/** A RoleBinding or ClusterRoleBinding that hands out syncward's own roles or identity. */
export function bindingProblem(reserved: Reserved, obj: KubeObject, what: string): string | undefined {
  if (groupOf(obj.apiVersion) !== RBAC || !obj.kind.endsWith("RoleBinding")) return undefined;
  const ref = (obj as { roleRef?: { kind?: string; name?: string } }).roleRef;
  if (ref?.kind === "ClusterRole" && typeof ref.name === "string" && OWN_NAME.test(ref.name))
    return `${what}: binds syncward's own ClusterRole "${ref.name}": only the operator grants it`;
  const subjects = (obj as { subjects?: Array<{ kind?: string; namespace?: string }> }).subjects ?? [];
  const own = subjects.find(
    (s) => s.kind === "ServiceAccount" && s.namespace !== undefined && reserved.namespaces.has(s.namespace),
  );
  if (own)
    return `${what}: grants a ServiceAccount of the reserved namespace "${own.namespace}": only the operator grants syncward's own identity`;
  return undefined;
}

export class ReservedWriteError extends Error {
  override readonly name = "ReservedWriteError";
}

function keyOfObject(obj: KubeObject): Target {
  return {
    group: groupOf(obj.apiVersion),
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? "",
    name: obj.metadata.name ?? "",
  };
}

function refuseObject(reserved: Reserved, obj: KubeObject): void {
  const what = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name ?? ""}`;
  const problem = reservedProblem(reserved, keyOfObject(obj), what) ?? bindingProblem(reserved, obj, what);
  if (problem) throw new ReservedWriteError(`refused: ${problem}`);
}

/**
 * A view of `client` whose write verbs (apply and its dry runs, create, replace, delete) throw
 * ReservedWriteError for a reserved target before any request is sent; reads and watches are
 * the client's own. Every write of a sync goes through this view.
 */
export function guardWrites(client: KubeClient, reserved: Reserved): KubeClient {
  const view = Object.create(client) as KubeClient;
  view.apply = async (obj, options) => {
    refuseObject(reserved, obj);
    return client.apply.call(view, obj, options);
  };
  view.dryRunApply = async (obj, validation) => {
    refuseObject(reserved, obj);
    return client.dryRunApply.call(view, obj, validation);
  };
  view.create = async (obj) => {
    refuseObject(reserved, obj);
    return client.create.call(view, obj);
  };
  view.replace = async (obj) => {
    refuseObject(reserved, obj);
    return client.replace.call(view, obj);
  };
  view.delete = async (key, propagation) => {
    const what = `${key.kind} ${key.namespace ? `${key.namespace}/` : ""}${key.name}`;
    const problem = reservedProblem(reserved, { ...key, group: groupOf(key.apiVersion) }, what);
    if (problem) throw new ReservedWriteError(`refused: ${problem}`);
    return client.delete.call(view, key, propagation);
  };
  return view;
}

/** The environment's destination or policy namespaces reaching into a reserved namespace. */
export function reservedDestinationProblems(
  env: { name: string; destination: { namespace: string }; policy: { namespaces: readonly string[] } },
  reserved: Reserved,
): string[] {
  const all = new Set([env.destination.namespace, ...env.policy.namespaces]);
  return [...all]
    .filter((ns) => reserved.namespaces.has(ns))
    .map(
      (ns) =>
        `environment ${env.name}: ${ns === env.destination.namespace ? "destination.namespace" : "policy.namespaces"} "${ns}" is reserved (syncward's own, its state's, Kubernetes' or the operator's): no repository deploys there, whatever its project allows`,
    );
}

/** Why one rendered object may not be written (its namespace defaulted to `fallback`), or undefined. */
export function reservedObjectProblem(
  reserved: Reserved,
  obj: KubeObject,
  namespaced: boolean,
  fallback: string,
): string | undefined {
  const namespace = namespaced ? obj.metadata.namespace || fallback : "";
  const key = { group: groupOf(obj.apiVersion), kind: obj.kind, namespace, name: obj.metadata.name ?? "" };
  const what = `${obj.kind.toLowerCase()}/${key.name}`;
  return reservedProblem(reserved, key, what) ?? bindingProblem(reserved, obj, what);
}

// Writes that impersonate a project's ServiceAccount (Argo CD's sync impersonation): the API
// server's refusal is kept word for word, followed by what to grant and to whom.
import { KubeApiError } from "./errors.ts";

/** The impersonation user of ServiceAccount `namespace/name`. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

const DENIAL =
  /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: (at the cluster scope|in the namespace "([^"]*)"))?/;

/** What to grant for a 403 of a write sent as `user` (a ServiceAccount's user name). */
export function impersonationHint(message: string, user: string): string {
  const [, , ns = "?", name = "?"] = user.split(":");
  if (/cannot impersonate/.test(message))
    return `syncward's own ServiceAccount may not impersonate ${user}: grant it "impersonate" on serviceaccounts "${name}" in namespace ${ns} (see deploy/components/impersonation)`;
  const m = DENIAL.exec(message);
  if (!m) return `syncward wrote as ${user} (the project's serviceAccount for this destination)`;
  const [, verb, resource, group, scope, inNamespace] = m;
  const what = `"${verb}" on ${resource}${group ? `.${group}` : ""}`;
  const where =
    scope === "at the cluster scope"
      ? "with a ClusterRole and ClusterRoleBinding"
      : `in namespace ${inNamespace ?? "?"} with a Role and RoleBinding`;
  return `syncward wrote as ${user}, the project's serviceAccount for this destination: grant ServiceAccount ${ns}/${name} ${what} ${where} (create the ServiceAccount first if it does not exist)`;
}

/** The API server's error of a write sent as `user`, with what to grant appended when forbidden. */
export function asImpersonated(err: KubeApiError, user: string): KubeApiError {
  if (err.status !== 403) return err;
  const out = new KubeApiError(
    `${err.message}; ${impersonationHint(err.message, user)}`,
    err.status,
    err.reason,
    err.method,
    err.path,
  );
  out.impersonatedAs = user;
  return out;
}

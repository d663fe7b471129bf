// Errors a person can fix, as the one line `syncward:` prints (exit 2). Loaded only when a command
// fails, so the modules it names stay out of `syncward --help`.
import { ConfigError, UnknownEnvironmentError } from "../config/load.ts";
import { describeForbidden, KubeApiError, KubeConnectionError } from "../kube/errors.ts";
import { SourceError } from "../source/errors.ts";
import { LimitsError } from "../source/limits.ts";
import { UsageError } from "./usage-error.ts";

export function oneLine(err: unknown): string | undefined {
  if (
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof UnknownEnvironmentError ||
    err instanceof SourceError ||
    err instanceof LimitsError
  ) {
    return err.message;
  }
  if (err instanceof KubeConnectionError) return `${err.message} (check --kubeconfig and --context)`;
  if (err instanceof KubeApiError) return kubeRefusal(err);
  return undefined;
}

/** What the API server's refusal means for the person at the terminal, and what to do. */
function kubeRefusal(err: KubeApiError): string {
  const asked = `${err.method} ${err.path}`;
  const forbidden = describeForbidden(err);
  if (forbidden)
    return `the API server refused ${asked}: ${forbidden}; use a --context whose identity may do that, or have a cluster admin grant it`;
  if (err.status === 401)
    return `the API server did not accept the credentials of your kubeconfig for ${asked} (401): log in to the cluster again (the token may have expired) or pick another --context`;
  if (err.transient)
    return `the API server could not handle ${asked} (${err.status} ${err.reason}): it is overloaded or restarting; try again in a minute`;
  return `the API server refused ${asked}: ${err.message}`;
}

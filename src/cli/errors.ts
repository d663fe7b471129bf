// Errors a person can fix, as the one line `syncward:` prints (exit 2). Loaded only when a command
// fails, so the modules it names stay out of `syncward --help`.
import { ConfigError, UnknownEnvironmentError } from "../config/load.ts";
import { KubeApiError, KubeConnectionError } from "../kube/errors.ts";
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
  if (err instanceof KubeApiError) return `the API server refused ${err.method} ${err.path}: ${err.message}`;
  return undefined;
}

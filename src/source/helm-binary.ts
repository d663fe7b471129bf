// Which helm renders charts: SYNCWARD_HELM when the operator names one, else the one tools/cluster/build.sh
// built from the Go module proxy (cached beside the control plane's binaries), else `helm` on the PATH.

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Must equal HELM_VERSION in tools/cluster/versions.env (a unit test holds them together). */
export const HELM_VERSION = "v3.22.0";

/** The helm binary to run. */
export function helmBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SYNCWARD_HELM) return env.SYNCWARD_HELM;
  const cache =
    env.SYNCWARD_CLUSTER_CACHE ??
    join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "syncward", "cluster");
  const built = join(cache, `helm-${HELM_VERSION}`, "bin", "helm");
  return existsSync(built) ? built : "helm";
}

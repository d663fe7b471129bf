// HTTPS_PROXY, HTTP_PROXY and NO_PROXY for syncward's requests to GitHub, as Octokit users expect.
// Octokit sends through Node's fetch, which reads the proxy variables only when Node is told to
// (NODE_USE_ENV_PROXY=1 or --use-env-proxy at start, or http.setGlobalProxyFromEnv at run time,
// which Node 24, the image's runtime, has). API servers are reached through syncward's own
// agents, which read the same variables themselves (kube/env-proxy.ts).
import * as http from "node:http";
import type { Logger } from "pino";

const NAMES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

type SetGlobalProxy = (env?: NodeJS.ProcessEnv) => () => void;

/** What was done about the proxy variables, for the startup line. */
export type OutboundProxy = "none" | "enabled" | "unsupported";

/**
 * Applies the proxy variables to fetch (hence to GitHub) when any is set. Returns "unsupported"
 * (and logs it) on a Node without run-time proxy support, rather than silently going direct.
 */
export function useOutboundProxy(
  log: Pick<Logger, "info" | "warn">,
  env: NodeJS.ProcessEnv = process.env,
  setGlobal: SetGlobalProxy | null | undefined = (
    http as unknown as { setGlobalProxyFromEnv?: SetGlobalProxy }
  ).setGlobalProxyFromEnv,
): OutboundProxy {
  const set = NAMES.filter((n) => env[n]?.trim());
  if (set.length === 0) return "none";
  if (!setGlobal) {
    log.warn(
      { component: "github", variables: set },
      `${set.join(", ")} set, but Node ${process.version} cannot apply it to GitHub requests at run time: start with NODE_USE_ENV_PROXY=1 or run on Node 24 (the image's runtime)`,
    );
    return "unsupported";
  }
  setGlobal(env);
  // Names only: a proxy URL may carry a password.
  log.info(
    { component: "github", variables: set },
    "GitHub requests go through the proxy the environment names",
  );
  return "enabled";
}

// The processes that read a repository (kustomize, helm template, git) run cut off from the network:
// a reference the pre-check missed still reaches no host, not even loopback. Where the platform allows
// it each runs in a fresh network namespace (`unshare -rn`: only a loopback interface that is down).
// Where it does not (a container whose seccomp profile refuses unshare), SYNCWARD_RENDER_ISOLATION
// decides: `auto` (default) logs once and runs with the weaker layers only, `required` refuses to
// render, `off` skips the namespace without a warning. The weaker layers apply always: an environment
// without syncward's secrets, every proxy variable pointing at a closed port, and git allowed no
// transport at all.

import { execFile } from "node:child_process";

export const ISOLATION_VARIABLE = "SYNCWARD_RENDER_ISOLATION";
export type IsolationMode = "auto" | "required" | "off";

/** Thrown when renders must be isolated and the platform cannot: the operator's to fix, so retried, not held. */
export class IsolationUnavailableError extends Error {
  override readonly name = "IsolationUnavailableError";
}

/** The mode the operator chose; a value that is none of them is an error at start. */
export function isolationMode(env: NodeJS.ProcessEnv = process.env): IsolationMode {
  const raw = (env[ISOLATION_VARIABLE] ?? "").trim();
  if (raw === "") return "auto";
  if (raw === "auto" || raw === "required" || raw === "off") return raw;
  throw new Error(`${ISOLATION_VARIABLE}=${JSON.stringify(raw)}: expected auto, required or off`);
}

/** Variables a child process may inherit; everything else (keys, tokens, webhook secret) stays in syncward. */
const INHERITED = [
  "PATH",
  "HOME",
  "TMPDIR",
  "TZ",
  "LANG",
  "USER",
  "LOGNAME",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "XDG_CONFIG_HOME",
  // The operator's git settings for a local source (git-refs.ts reads the same ones).
  "GIT_DIR",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_NOSYSTEM",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
];

/** Where an isolated process's HTTP goes when no namespace holds it: a port nothing listens on. */
const DEAD_PROXY = "http://127.0.0.1:9";

/** The environment of a child: the allowed part of syncward's, then `extra` (undefined removes). */
export function childEnvironment(
  extra: Record<string, string | undefined> = {},
  isolated = false,
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of INHERITED) if (from[key] !== undefined) env[key] = from[key];
  Object.assign(env, { LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat" });
  if (isolated) {
    for (const key of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"])
      env[key] = DEAD_PROXY;
    env.NO_PROXY = "";
    env.no_proxy = "";
    // No git transport at all (not even file://, which would read other repositories on the host).
    env.GIT_ALLOW_PROTOCOL = "syncward-none";
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function succeeds(file: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000, env: childEnvironment() }, (err) => resolve(!err));
  });
}

let probed: Promise<string[] | undefined> | undefined;

/** The unshare flags that work here (`-rn` unprivileged, `-n` as root), or undefined: probed once. */
export function namespaceFlags(): Promise<string[] | undefined> {
  probed ??= (async () => {
    for (const flags of [["-rn"], ["-n"]]) if (await succeeds("unshare", [...flags, "true"])) return flags;
    return undefined;
  })();
  return probed;
}

let warned = false;

/**
 * `file args` as the command to run: inside `unshare <flags> --` when namespaces work; as is when
 * they do not and the mode allows it (warning once); an IsolationUnavailableError when it does not.
 */
export async function isolatedCommand(
  file: string,
  args: string[],
  mode: IsolationMode = isolationMode(),
): Promise<{ file: string; args: string[] }> {
  if (mode === "off") return { file, args };
  const flags = await namespaceFlags();
  if (flags) return { file: "unshare", args: [...flags, "--", file, ...args] };
  if (mode === "required")
    throw new IsolationUnavailableError(
      `renders must run in a network namespace (${ISOLATION_VARIABLE}=required), but 'unshare -rn' fails here: allow unprivileged user namespaces for syncward's container, or set ${ISOLATION_VARIABLE}=auto`,
    );
  if (!warned) {
    warned = true;
    process.emitWarning(
      `render processes run without a network namespace ('unshare -rn' fails here): the reference pre-check, a closed proxy and git's empty protocol list still apply, but loopback stays reachable; set ${ISOLATION_VARIABLE}=required to refuse renders instead`,
      { code: "SYNCWARD_RENDER_NOT_ISOLATED" },
    );
  }
  return { file, args };
}

/** unshare could not start the program: the program is missing (what a direct spawn calls ENOENT). */
export function missingUnderUnshare(stderr: string): boolean {
  return /unshare: failed to execute .*: No such file or directory/.test(stderr);
}

// The webhook secret, checked once at start-up before Probot runs: every webhook is trusted only
// through its signature, and Probot signs with the literal secret "development" when none is set,
// so without this check anyone could forge `/approve` comments. The app refuses to start instead,
// unless the operator sets SYNCWARD_INSECURE_DEVELOPMENT=1, and then every log line says so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";

/**
 * The shortest secret accepted. The secret keys HMAC-SHA256 over every delivery: 16 random
 * characters (about 95 bits from letters and digits, 64 from hex) are beyond guessing, online or
 * from a captured delivery, while every generator people use (`openssl rand -hex 32`, a password
 * manager, GitHub's own suggestion) produces more. Shorter ones are typed by hand.
 */
export const MIN_WEBHOOK_SECRET = 16;

export const INSECURE_FLAG = "SYNCWARD_INSECURE_DEVELOPMENT";

const HOW =
  "set WEBHOOK_SECRET to the secret configured on the GitHub App (its settings page, Webhook secret), " +
  `at least ${MIN_WEBHOOK_SECRET} characters, e.g. \`openssl rand -hex 32\` (in .env, the environment, or the Kubernetes Secret deploy/ reads)`;

/**
 * Why the app must not start with this environment, or undefined. Only a configured app is
 * checked: without APP_ID and a private key Probot runs its setup flow, which has no secret yet.
 */
export function webhookSecretProblem(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const configured = Boolean(env.APP_ID) && Boolean(env.PRIVATE_KEY || env.PRIVATE_KEY_PATH);
  if (!configured) return undefined;
  const secret = env.WEBHOOK_SECRET ?? "";
  if (secret === "")
    return `syncward refuses to start: WEBHOOK_SECRET is not set, so any webhook could be forged; ${HOW}`;
  if (secret.length < MIN_WEBHOOK_SECRET)
    return `syncward refuses to start: WEBHOOK_SECRET is ${secret.length} characters, shorter than ${MIN_WEBHOOK_SECRET}; ${HOW}`;
  return undefined;
}

/** The process's environment as Probot will see it: its `.env` (in the working directory) wins. */
export function effectiveEnv(cwd = process.cwd()): Record<string, string | undefined> {
  try {
    return { ...process.env, ...parseEnv(readFileSync(join(cwd, ".env"), "utf8")) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ...process.env };
    throw err;
  }
}

export interface StartLogger {
  child(bindings: Record<string, string>): StartLogger;
}

/**
 * Exits with the problem on stderr when the secret is unusable. With the development flag the
 * returned logger carries a warning on every line instead.
 */
export function checkWebhookSecret<L extends StartLogger>(
  log: L,
  env = effectiveEnv(),
  exit: (message: string) => never = (message) => {
    process.stderr.write(`${message}\n`);
    process.exit(78); // EX_CONFIG
  },
): L {
  const problem = webhookSecretProblem(env);
  if (!problem) return log;
  if (env[INSECURE_FLAG] !== "1")
    exit(`${problem}; for local development only, ${INSECURE_FLAG}=1 starts it anyway`);
  return log.child({
    insecure: `${INSECURE_FLAG}=1: webhook signatures are not a protection (${problem.replace(/^syncward refuses to start: /, "")}); never run this way on a real installation`,
  }) as L;
}

// `npm start` and the image's command: the GitHub App in Probot's server, logging through
// syncward's logger (redaction on, JSON lines, pretty text on a terminal) instead of Probot's.
// SIGTERM and SIGINT stop it gracefully within SYNCWARD_STOP_TIMEOUT (observability/shutdown.ts).
import { run } from "probot";
import { createLogger } from "../observability/logger.ts";
import { Shutdown, stopTimeoutMs } from "../observability/shutdown.ts";
import { startupFailure } from "../observability/startup-error.ts";
import { appWith } from "./app.ts";
import { useOutboundProxy } from "./outbound-proxy.ts";
import { checkPrivateKey } from "./private-key-check.ts";
import { checkWebhookSecret } from "./webhook-secret.ts";

try {
  const log = checkWebhookSecret(createLogger());
  checkPrivateKey();
  useOutboundProxy(log);
  const shutdown = new Shutdown({ log, timeoutMs: stopTimeoutMs() });
  const server = await run(appWith(shutdown), { log });
  // Probot's own SIGINT handler exits at once, without stopping the loops or releasing Leases.
  process.removeAllListeners("SIGINT");
  shutdown.first("closing the webhook listener", () => server.stop());
  shutdown.listen();
} catch (err) {
  process.stderr.write(`${startupFailure(err)}\n`);
  process.exit(1);
}

// `npm start` and the image's command: the GitHub App in Probot's server, logging through
// syncward's logger (redaction on, JSON lines, pretty text on a terminal) instead of Probot's.
import { run } from "probot";
import { createLogger } from "../observability/logger.ts";
import app from "./app.ts";
import { checkWebhookSecret } from "./webhook-secret.ts";

await run(app, { log: checkWebhookSecret(createLogger()) });

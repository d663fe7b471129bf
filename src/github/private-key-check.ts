// The GitHub App's private key, checked before Probot reads it: Probot prints the parser's stack
// for a bad key and goes on to fail with "Certificate is missing", which hides the cause.
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";

/** Throws one readable error when PRIVATE_KEY or PRIVATE_KEY_PATH is set but holds no private key. */
export function checkPrivateKey(env: NodeJS.ProcessEnv = process.env): void {
  let text: string;
  let from: string;
  if (env.PRIVATE_KEY) {
    from = "PRIVATE_KEY";
    text = env.PRIVATE_KEY.replace(/\\n/g, "\n");
    // Probot also takes the .pem file base64-encoded.
    if (!text.includes("-----BEGIN")) text = Buffer.from(text, "base64").toString("utf8");
  } else if (env.PRIVATE_KEY_PATH) {
    from = `PRIVATE_KEY_PATH (${env.PRIVATE_KEY_PATH})`;
    try {
      text = readFileSync(env.PRIVATE_KEY_PATH, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new Error(`${from}: cannot be read (${code}); mount the GitHub App's .pem file there`);
    }
  } else return;
  try {
    createPrivateKey(text);
  } catch {
    throw new Error(
      `${from}: not a PEM private key; use the .pem file GitHub generated for the app, whole, with its BEGIN and END lines`,
    );
  }
}

// What an automatic rollback needs of the rest of an environment's config: it belongs to an
// environment that syncs on its own. A manual one deploys only what a person asks for, so a bad
// release there is a person's to undo (`/rollback`), and nothing would move it on afterwards.
import type { SchemaIssue } from "./schema.ts";
import type { SyncwardConfig } from "./types.ts";

export function rollbackIssues(config: SyncwardConfig): SchemaIssue[] {
  return config.environments.flatMap((env, index) => {
    if (!env.rollback) return [];
    const automated = env.syncPolicy.automated && env.syncPolicy.automated.enabled !== false;
    if (automated) return [];
    return [
      {
        path: ["environments", index, "rollback", "onDegraded"],
        code: "custom",
        message: `${env.name} rolls back on its own only with syncPolicy.automated: a manual environment deploys what a person asks for, and \`/rollback ${env.name}\` is how a person goes back`,
      },
    ];
  });
}

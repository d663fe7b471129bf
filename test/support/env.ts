// Environments for tests, built through the real config parser so defaults are the real defaults.
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import type { EnvironmentConfig } from "../../src/config/types.ts";

/** `fields` is the YAML shape of one environment (as a user writes it); name and destination are filled in. */
export function envConfig(namespace: string, fields: Record<string, unknown> = {}): EnvironmentConfig {
  const env = { name: "dev", source: { path: "." }, destination: { namespace }, ...fields };
  const config = parseConfig(stringify({ environments: [env] }));
  const parsed = config.environments[0];
  if (!parsed) throw new Error("config has no environment");
  return parsed;
}

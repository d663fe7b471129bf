// The published JSON Schema of `.github/syncward.yml`, generated from the zod schema's input side
// (what people write: "5s" strings, omitted defaults). tools/gen-schema.ts writes it to
// schema/syncward.schema.json; a unit test fails when the committed file is stale.
import { z } from "zod";
import { configSchema } from "./schema.ts";

// Where editors fetch it: the schema ships in the npm package (package.json "files"), and unpkg
// serves any published package file over https.
export const SCHEMA_ID = "https://unpkg.com/syncward/schema/syncward.schema.json";

export function buildJsonSchema(): Record<string, unknown> {
  return jsonSchemaFor(configSchema, {
    $id: SCHEMA_ID,
    title: "syncward configuration (.github/syncward.yml)",
    description:
      "Environments that syncward keeps equal to this repository: source path and branch, destination cluster and namespace, sync policy (Argo CD field names), sync windows and approvals. Durations are Go-style strings such as 30s, 5m or 1h30m.",
  });
}

/** The input side of `schema` (what people write) as draft 2020-12 JSON Schema, with `meta` on top. */
export function jsonSchemaFor(
  schema: z.ZodType,
  meta: { $id: string; title: string; description: string },
): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "throw",
    override: ({ jsonSchema }) => {
      // z.int() adds the safe-integer bounds: noise for a config file.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, ...meta, ...rest };
}

/** The file's exact text: 2-space JSON and a final newline. */
export function renderJsonSchema(): string {
  return `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
}

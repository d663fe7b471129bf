// `previewEnvironments:` in `.github/syncward.yml`: templates of a live copy of an environment for
// a pull request. A template only says which environment to copy and how to name the copy; where
// previews may run at all, how many and with what quota is the operator's (projects document).
import { z } from "zod";
import { duration, strictObject } from "./schema-parts.ts";
import type { PreviewTemplate, SyncwardConfig } from "./types.ts";

/** The placeholders a template's namespace and url may use. */
export const PREVIEW_PLACEHOLDERS = ["number", "branch", "sha7"] as const;
const PLACEHOLDER_RE = /\{([^{}]*)\}/g;

/** What is wrong with a namespace template, or undefined. Values are DNS-safe by construction. */
export function namespaceTemplateProblem(template: string): string | undefined {
  const unknown = [...template.matchAll(PLACEHOLDER_RE)]
    .map((m) => m[1] ?? "")
    .filter((name) => !(PREVIEW_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    return `unknown placeholder {${unknown[0]}}: use ${PREVIEW_PLACEHOLDERS.map((p) => `{${p}}`).join(", ")}`;
  }
  // Two pull requests must never share a namespace: the number is what tells them apart.
  if (!template.includes("{number}")) return 'must contain {number}, e.g. "payments-pr-{number}"';
  const literal = template.replace(PLACEHOLDER_RE, "x");
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(literal)) {
    return `${JSON.stringify(template)} is not a namespace: outside the placeholders use lowercase letters, digits and "-", starting and ending with a letter or digit`;
  }
  // {number} up to 7 digits and {sha7} are fixed-width; {branch} is cut to fit (expandPreviewName).
  const fixed = template.replaceAll("{branch}", "").replace(PLACEHOLDER_RE, "xxxxxxx");
  if (fixed.length > 63 - (template.includes("{branch}") ? 8 : 0)) {
    return "is too long: a namespace has at most 63 characters, and {number} and {sha7} take 7 each";
  }
  return undefined;
}

const namespaceTemplate = z
  .string()
  .superRefine((text, ctx) => {
    const problem = namespaceTemplateProblem(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe(
    "The preview's namespace, one per pull request: must contain {number}; {branch} (DNS-safe, cut to fit) and {sha7} may be used too.",
  );

export const previewTemplateSchema = strictObject({
  from: z
    .string()
    .min(1, { error: "must name an environment" })
    .describe("The environment whose source and policy the preview takes (never a gated or production one)."),
  namespace: namespaceTemplate,
  url: z
    .string()
    .regex(/^https?:\/\/\S+$/, { error: "must be an http(s) URL (placeholders allowed)" })
    .optional()
    .describe(
      "The preview's URL, shown on the pull request and its GitHub deployment; the same placeholders.",
    ),
  trigger: z
    .enum(["label", "comment", "always"], { error: 'must be "label", "comment" or "always"' })
    .default("label")
    .describe(
      "What starts a preview: the label on the pull request, a /preview comment, or every pull request (default label; /preview works with each).",
    ),
  label: z
    .string()
    .min(1)
    .max(50)
    .default("preview")
    .describe("The label that starts a preview while it is on the pull request (default preview)."),
  ttl: duration(60_000)
    .prefault("72h")
    .describe("A preview is torn down this long after its pull request last moved (default 72h)."),
  permission: z
    .enum(["write", "maintain", "admin"], { error: 'must be "write", "maintain" or "admin"' })
    .default("write")
    .describe(
      "Least repository permission of the pull request's author, of everyone who pushed to its head, and of whoever asks for the preview (default write).",
    ),
});

export const previewEnvironmentsSchema = z
  .array(previewTemplateSchema)
  .max(10, { error: "at most 10 preview templates" })
  .optional()
  .describe("Live copies of an environment for pull requests that ask for one (see docs/previews.md).");

/** A template's problems across the config (its `from`), as path and message. */
export function previewTemplateIssues(
  config: SyncwardConfig,
): Array<{ path: PropertyKey[]; message: string }> {
  const issues: Array<{ path: PropertyKey[]; message: string }> = [];
  const seen = new Set<string>();
  for (const [index, template] of (config.previewEnvironments ?? []).entries()) {
    const path = ["previewEnvironments", index, "from"];
    const from = config.environments.find((e) => e.name === template.from);
    if (!from) {
      const names = config.environments.map((e) => e.name).join(", ");
      issues.push({
        path,
        message: `no environment named ${JSON.stringify(template.from)} (environments: ${names})`,
      });
    } else if (refusedSource(from)) {
      issues.push({ path, message: `${JSON.stringify(from.name)} ${refusedSource(from)}` });
    }
    if (seen.has(template.from)) {
      issues.push({
        path,
        message: `a second template for ${JSON.stringify(template.from)}: one per environment`,
      });
    }
    seen.add(template.from);
  }
  return issues;
}

/**
 * Why an environment cannot be a preview's source, or undefined. A preview deploys without an
 * approval into the source's cluster: a gated or production environment's cluster is exactly
 * where unapproved code must never run.
 */
export function refusedSource(env: { approval?: unknown; production: boolean }): string | undefined {
  if (env.approval) return "is gated by approval: a preview never takes a gated environment's place";
  if (env.production) return "is production: a preview never deploys to a production destination";
  return undefined;
}

export type { PreviewTemplate };

// Writes docs/configuration.md, the reference of every field of `.github/syncward.yml` and of the
// operator's projects, from the same JSON Schemas tools/gen-schema.ts publishes (themselves made
// from the zod schemas), so the reference cannot say something the parser does not do.
//   node --import tsx tools/config-reference.ts          write the file (npm run docs)
//   node --import tsx tools/config-reference.ts --check  exit 1 if the committed file is stale
// test/unit/docs/config-reference.test.ts runs the same comparison.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildJsonSchema } from "../src/config/json-schema.ts";
import { buildProjectsJsonSchema } from "../src/projects/json-schema.ts";
import { ARGO_EQUIVALENTS } from "./config-reference-argo.ts";
import { githubSlug } from "./markdown-slug.ts";

type Schema = Record<string, unknown> & {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  not?: unknown;
  additionalProperties?: Schema | boolean;
  default?: unknown;
};

export const REFERENCE_PATH = join(import.meta.dirname, "..", "docs", "configuration.md");
export const REGENERATE = "npm run docs";
const PROJECTS_SCOPE = "projects.yaml";

/** One documented field: where it sits, what it takes, and its Argo CD counterpart. */
export interface Field {
  /** The field's path, `environments[].syncPolicy.prune`; in the projects document `projects.yaml:` first. */
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  description: string;
  argo: string;
}

interface Section {
  heading: string;
  description: string;
  fields: Field[];
}

/** A section's heading: the object's path in code, after its document's name when not the config's. */
function headingOf(scope: string, path: string): string {
  const where = path ? `\`${path}\`` : "Top level";
  return scope ? `\`${scope}\`: ${where}` : where;
}

const anchorOf = (scope: string, path: string): string => `#${githubSlug(headingOf(scope, path))}`;

/** The object nodes of a schema, each with its fields, in the schema's order (parents first). */
export function sectionsOf(root: Schema, scope: string): Section[] {
  const sections: Section[] = [];
  const visit = (node: Schema, fieldPath: string): void => {
    const value = node.additionalProperties;
    if (!node.properties && typeof value === "object") {
      visit(value, `${fieldPath}.<key>`);
      return;
    }
    const found = objectOf(node, fieldPath);
    if (!found) return;
    const { obj, path } = found;
    const description = path ? (obj.description ?? node.description ?? "") : "";
    const section: Section = { heading: headingOf(scope, path), description, fields: [] };
    sections.push(section);
    const nested: Array<[Schema, string]> = [];
    for (const [name, child] of Object.entries(obj.properties ?? {})) {
      const childPath = path ? `${path}.${name}` : name;
      const key = scope ? `${scope}:${childPath}` : childPath;
      section.fields.push({
        path: key,
        type: typeOf(child, (p) => anchorOf(scope, p), childPath),
        required: (obj.required ?? []).includes(name),
        default: child.default,
        description: child.description ?? "",
        argo: ARGO_EQUIVALENTS[key] ?? "",
      });
      nested.push([child, childPath]);
    }
    for (const [child, childPath] of nested) visit(child, childPath);
  };
  visit(root, "");
  return sections.filter((s) => s.fields.length > 0);
}

/** The object a field holds: itself, its list's items ("[]" on its path), or an anyOf's object branch. */
function objectOf(node: Schema, path = ""): { obj: Schema; path: string } | undefined {
  if (node.properties) return { obj: node, path };
  if (node.items) return objectOf(node.items, `${path}[]`);
  for (const branch of node.anyOf ?? []) {
    const found = objectOf(branch, path);
    if (found) return found;
  }
  return undefined;
}

/** A field's type in words; `anchor` links an object to the section listing its fields. */
function typeOf(node: Schema, anchor: (path: string) => string, path: string): string {
  if (node.not !== undefined) return "not supported (refused)";
  if (node.anyOf) return node.anyOf.map((b) => typeOf(b, anchor, path)).join(" or ");
  if (node.enum) return `one of ${node.enum.map((v) => `\`${String(v)}\``).join(", ")}`;
  if (node.const !== undefined) return `\`${String(node.const)}\``;
  if (node.type === "array") {
    return `list of ${plural(node.items ? typeOf(node.items, anchor, `${path}[]`) : "values")}`;
  }
  if (node.type === "object" && node.properties) return `object ([fields](${anchor(path)}))`;
  if (node.type === "object") {
    const value = node.additionalProperties;
    if (typeof value !== "object" || Object.keys(value).length === 0) return "map";
    const of = objectOf(value)
      ? `object ([fields](${anchor(`${path}.<key>`)}))`
      : typeOf(value, anchor, path);
    return `map of string to ${of}`;
  }
  if (node.type === "integer" || node.type === "number") return numberType(node);
  return node.type ?? "any";
}

function numberType(node: Schema): string {
  const { minimum: min, maximum: max } = node as { minimum?: number; maximum?: number };
  const base = node.type === "integer" ? "integer" : "number";
  if (min !== undefined && max !== undefined) return `${base} (${min} to ${max})`;
  if (min !== undefined) return `${base} (at least ${min})`;
  if (max !== undefined) return `${base} (at most ${max})`;
  return base;
}

function plural(type: string): string {
  if (type.startsWith("object")) return type.replace(/^object/, "objects");
  return /^(string|integer|number|boolean)$/.test(type) ? `${type}s` : type;
}

function renderField(field: Field): string {
  const name = field.path.slice(Math.max(field.path.lastIndexOf("."), field.path.lastIndexOf(":")) + 1);
  const facts = [field.type];
  if (field.required) facts.push("**required**");
  if (field.default !== undefined && !isEmptyObject(field.default)) {
    facts.push(`default \`${JSON.stringify(field.default)}\``);
  }
  facts.push(`Argo CD: ${field.argo || "none"}`);
  const description = field.description ? `\n  ${field.description.replace(/\s*\n\s*/g, " ")}` : "";
  return `- **\`${name}\`**: ${facts.join("; ")}.${description}`;
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}

function renderSections(sections: Section[]): string[] {
  return sections.flatMap((s) => [
    `### ${s.heading}`,
    "",
    ...(s.description ? [s.description, ""] : []),
    ...s.fields.map(renderField),
    "",
  ]);
}

/** The whole of docs/configuration.md. */
export function renderConfigReference(): string {
  const config = buildJsonSchema() as Schema;
  const projects = buildProjectsJsonSchema() as Schema;
  return [
    "# Configuration reference",
    "",
    `<!-- Generated by tools/config-reference.ts from the zod schemas; do not edit. Regenerate: ${REGENERATE} -->`,
    "",
    "Every field syncward reads, with its type, its default and the Argo CD field it corresponds to.",
    "Unknown fields are errors that name the field and suggest the nearest known one. Durations are",
    "Go-style strings (`30s`, `5m`, `1h30m`). Editors validate with the JSON Schemas in `schema/`.",
    "",
    "- [The repository's configuration](#the-repositorys-configuration-githubsyncwardyml)",
    "- [The operator's projects](#the-operators-projects)",
    "",
    "## The repository's configuration: `.github/syncward.yml`",
    "",
    config.description ?? "",
    "",
    ...renderSections(sectionsOf(config, "")),
    "## The operator's projects",
    "",
    `${projects.description ?? ""} Where they are read from: ${String(projects.title ?? "")}; see [Projects](operating/projects.md).`,
    "",
    ...renderSections(sectionsOf(projects, PROJECTS_SCOPE)),
  ]
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n*$/, "\n");
}

/** Every field path of both schemas (the Argo CD map's keys must be among them). */
export function allFieldPaths(): string[] {
  return [
    ...sectionsOf(buildJsonSchema() as Schema, ""),
    ...sectionsOf(buildProjectsJsonSchema() as Schema, PROJECTS_SCOPE),
  ].flatMap((s) => s.fields.map((f) => f.path));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderConfigReference();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(REFERENCE_PATH, "utf8");
    } catch {}
    if (current !== text) {
      process.stderr.write(`${REFERENCE_PATH} is stale: run ${REGENERATE}\n`);
      process.exit(1);
    }
    process.stdout.write(`${REFERENCE_PATH} is up to date\n`);
  } else {
    writeFileSync(REFERENCE_PATH, text);
    process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
  }
}

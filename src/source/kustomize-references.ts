// Every path or URL a kustomization can make kustomize read, with the field it is in and its line.
// The list follows kustomize's own Kustomization type (api/types/kustomization.go) and the builtin
// plugin configs that `generators:`/`transformers:`/`validators:` may hold: a field missing here
// would be a way to the network, so the pre-check and the tests both read this one table.

import { type Document, isMap, isSeq, type Node } from "yaml";

/** How kustomize uses the value: a file, a folder, or either (a folder is a kustomization to follow). */
export type ReferenceKind = "file" | "directory" | "resource" | "plugin";

export interface Reference {
  /** Where it is: `resources`, `patches[2].path`, `secretGenerator[0].envs`. */
  field: string;
  value: string;
  line: number;
  kind: ReferenceKind;
  /** A generator's input (env file, file, literal): its content is secret-ish and kept out of errors. */
  generatorInput?: "file" | "literal";
}

type LineAt = (offset: number) => number;

function lineOf(node: unknown, lineAt: LineAt, fallback = 1): number {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? lineAt(range[0]) : fallback;
}

function scalarText(node: unknown): string | undefined {
  const value = (node as { value?: unknown } | null)?.value;
  return typeof value === "string" ? value : undefined;
}

/** Items of the sequence at `path` (empty when it is not one). */
function items(root: Node | Document.Parsed, path: Array<string | number>): Node[] {
  const seq = (root as Document.Parsed).getIn ? (root as Document.Parsed).getIn(path, true) : undefined;
  return isSeq(seq) ? (seq.items as Node[]) : [];
}

function child(node: Node, key: string): Node | undefined {
  return isMap(node) ? (node.get(key, true) as Node | undefined) : undefined;
}

const LIST_FIELDS: Array<[string, ReferenceKind]> = [
  ["resources", "resource"],
  ["bases", "resource"],
  ["components", "resource"],
  ["crds", "file"],
  ["configurations", "file"],
  ["generators", "plugin"],
  ["transformers", "plugin"],
  ["validators", "plugin"],
];

/** A strategic-merge patch given inline rather than as a path. */
const isInline = (text: string) => text.includes("\n") || /^\s*[{[]|^\s*apiVersion\s*:/.test(text);

/** Paths in one config document: a kustomization, a Component or a builtin plugin's config. */
export function referencesOf(doc: Document.Parsed, lineAt: LineAt): Reference[] {
  const found: Reference[] = [];
  const add = (field: string, node: unknown, kind: ReferenceKind, line = lineOf(node, lineAt)) => {
    const value = scalarText(node);
    if (value !== undefined) found.push({ field, value, line, kind });
  };
  const contents = doc.contents as Node | null;
  if (!isMap(contents)) return found;
  for (const [field, kind] of LIST_FIELDS)
    for (const node of items(doc, [field])) {
      const value = scalarText(node);
      if (value === undefined) continue;
      // A plugin entry may be the config itself, inline: its paths are checked as a document's.
      if (kind === "plugin" && value.includes("\n")) continue;
      add(field, node, kind);
    }
  for (const field of ["patches", "patchesJson6902", "replacements"])
    items(doc, [field]).forEach((node, i) => {
      add(`${field}[${i}].path`, child(node, "path"), "file", lineOf(node, lineAt));
    });
  items(doc, ["patchesStrategicMerge"]).forEach((node, i) => {
    const value = scalarText(node);
    if (value !== undefined && !isInline(value)) add(`patchesStrategicMerge[${i}]`, node, "file");
  });
  for (const generator of ["configMapGenerator", "secretGenerator"])
    items(doc, [generator]).forEach((node, i) => {
      for (const f of items(node, ["files"])) {
        const value = scalarText(f);
        if (value === undefined) continue;
        // `key=path` or `path`
        const path = value.includes("=") ? value.slice(value.indexOf("=") + 1) : value;
        const line = lineOf(f, lineAt);
        found.push({
          field: `${generator}[${i}].files`,
          value: path,
          line,
          kind: "file",
          generatorInput: "file",
        });
      }
      for (const e of items(node, ["envs"]))
        if (scalarText(e) !== undefined)
          found.push({
            field: `${generator}[${i}].envs`,
            value: scalarText(e) as string,
            line: lineOf(e, lineAt),
            kind: "file",
            generatorInput: "file",
          });
      const env = child(node, "env");
      if (scalarText(env) !== undefined)
        found.push({
          field: `${generator}[${i}].env`,
          value: scalarText(env) as string,
          line: lineOf(env, lineAt),
          kind: "file",
          generatorInput: "file",
        });
      for (const l of items(node, ["literals"])) {
        const text = scalarText(l);
        if (text !== undefined)
          found.push({
            field: `${generator}[${i}].literals`,
            value: text,
            line: lineOf(l, lineAt),
            kind: "file",
            generatorInput: "literal",
          });
      }
    });
  add("openapi.path", doc.getIn(["openapi", "path"], true), "file");
  add("helmGlobals.chartHome", doc.getIn(["helmGlobals", "chartHome"], true), "directory");
  add("helmGlobals.configHome", doc.getIn(["helmGlobals", "configHome"], true), "directory");
  for (const field of ["helmCharts", "helmChartInflationGenerator"])
    items(doc, [field]).forEach((node, i) => {
      const line = lineOf(node, lineAt);
      for (const key of ["valuesFile", "values", "chartHome"])
        add(`${field}[${i}].${key}`, child(node, key), key === "chartHome" ? "directory" : "file", line);
      for (const v of items(node, ["additionalValuesFiles"]))
        add(`${field}[${i}].additionalValuesFiles`, v, "file", line);
    });
  // A builtin plugin's config (PatchTransformer, ConfigMapGenerator, HelmChartInflationGenerator...)
  // names its inputs at the top level.
  for (const key of ["path", "valuesFile", "chartHome", "configHome", "env"])
    add(key, doc.get(key, true), key.endsWith("Home") ? "directory" : "file");
  for (const key of ["files", "envs", "additionalValuesFiles"])
    for (const node of items(doc, [key])) {
      const value = scalarText(node);
      if (value === undefined) continue;
      const path = key === "files" && value.includes("=") ? value.slice(value.indexOf("=") + 1) : value;
      found.push({ field: key, value: path, line: lineOf(node, lineAt), kind: "file" });
    }
  return found.filter((r) => r.generatorInput === "literal" || r.value !== "");
}

/** Inline plugin configs in `generators`/`transformers`/`validators` (their text, to parse as documents). */
export function inlinePluginConfigs(
  doc: Document.Parsed,
  lineAt: LineAt,
): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  for (const field of ["generators", "transformers", "validators"])
    for (const node of items(doc, [field])) {
      const value = scalarText(node);
      if (value?.includes("\n")) out.push({ text: value, line: lineOf(node, lineAt) });
    }
  return out;
}

/** What kustomize would fetch over the network (or from a git host) instead of reading the tree. */
export function looksRemote(entry: string, kind: ReferenceKind): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) || /^[a-z][a-z0-9+.-]*::/i.test(entry)) return true;
  if (/^(git@|[\w.-]+@[\w.-]+:)/i.test(entry)) return true;
  if (kind !== "resource") return false;
  // kustomize's remote-target forms without a scheme.
  return (
    /^(gh:|github\.com[/:]|gitlab\.com[/:]|bitbucket\.org[/:])/i.test(entry) ||
    /[?&](ref|version|timeout|submodules)=/.test(entry) ||
    /^[^/]+\.[^/]+\/.*\/\//.test(entry)
  );
}

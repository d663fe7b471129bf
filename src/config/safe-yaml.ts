// YAML read safely, for every file syncward reads from a repository or a user: YAML 1.2 core
// schema only (no custom or language-specific tags such as `!!js/function`, which are refused
// rather than read as strings), unique keys, a single document, a size cap and a bounded number
// of aliases (against "billion laughs" expansion). Merge keys (`<<: *defaults`) are allowed.
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
} from "yaml";
import { ConfigError, type ConfigIssue } from "./config-error.ts";

/** Larger texts are refused before parsing: a real config is a few KiB. */
export const MAX_YAML_BYTES = 512 * 1024;
/** Aliases (`*name`) allowed in one text. */
export const MAX_ALIAS_COUNT = 100;

export interface SafeYaml {
  /** The plain data: objects, arrays, strings, numbers, booleans, null. */
  data: unknown;
  /** 1-based line of the key (or list item) at `path`, or of its deepest ancestor present. */
  lineAt(path: readonly PropertyKey[]): number | undefined;
}

/** Parses `text` safely. @throws ConfigError naming `file` and the line of each problem. */
export function parseYamlSafely(text: string, file: string): SafeYaml {
  if (Buffer.byteLength(text, "utf8") > MAX_YAML_BYTES) {
    throw new ConfigError(file, [{ path: "", message: `is larger than ${MAX_YAML_BYTES / 1024} KiB` }]);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    schema: "core",
    version: "1.2",
    merge: true,
    uniqueKeys: true,
    customTags: [],
    resolveKnownTags: false,
  });
  const lineOf = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset).line;

  // yaml only warns about unknown tags and would read `!!js/function "..."` as a string: refuse.
  const problems: ConfigIssue[] = [...doc.errors, ...doc.warnings].map((e) => ({
    path: "",
    line: lineOf(e.pos[0]),
    message:
      e.code === "TAG_RESOLVE_FAILED"
        ? `${e.message.replace("tag:yaml.org,2002:", "!!")} (custom YAML tags are not allowed)`
        : e.message,
  }));
  if (problems.length > 0) {
    throw new ConfigError(
      file,
      problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)),
    );
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ConfigError(file, [
      { path: "", message: `cannot be loaded: ${(err as Error).message} (aliases are limited)` },
    ]);
  }
  return { data, lineAt: (path) => lineOf(locate(doc, path)) };
}

/** Source offset of the key (or list item) at `path`, or of the deepest ancestor found. */
function locate(doc: Document, path: readonly PropertyKey[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = (doc.contents as Node | null)?.range?.[0];
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
      );
      if (!pair) return offset;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      node = node.items[segment];
      offset = (node as Node | undefined)?.range?.[0] ?? offset;
    } else {
      return offset;
    }
  }
  return offset;
}

// A fast first try at parsing manifests (js-yaml, several times faster than `yaml`'s Document
// model) that gives exactly what the precise parser (parse-manifests.ts) gives, or nothing: any
// error, and any construct where the two could differ (tags, aliases and merge keys, null-like
// keys, directives), leaves the text to the precise parser, which names the file and line.

import jsyaml from "js-yaml";

/**
 * YAML 1.2's core schema as `yaml` resolves plain scalars (its own tests, in its order), so `on`,
 * `yes` and `0755` mean what they mean today: the strings "on" and "yes", the decimal 755.
 */
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

const CORE_12 = jsyaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    new jsyaml.Type("tag:yaml.org,2002:null", {
      kind: "scalar",
      resolve: (s: string) => NULL.test(s),
      construct: () => null,
    }),
    new jsyaml.Type("tag:yaml.org,2002:bool", {
      kind: "scalar",
      resolve: (s: string) => BOOL.test(s),
      construct: (s: string) => s[0] === "t" || s[0] === "T",
    }),
    new jsyaml.Type("tag:yaml.org,2002:int", {
      kind: "scalar",
      resolve: (s: string) => INT_OCT.test(s) || INT.test(s) || INT_HEX.test(s),
      construct: (s: string) =>
        INT_OCT.test(s)
          ? Number.parseInt(s.slice(2), 8)
          : INT.test(s)
            ? Number.parseInt(s, 10)
            : Number.parseInt(s.slice(2), 16),
    }),
    new jsyaml.Type("tag:yaml.org,2002:float", {
      kind: "scalar",
      resolve: (s: string) => FLOAT_NAN.test(s) || FLOAT_EXP.test(s) || FLOAT.test(s),
      construct: (s: string) =>
        FLOAT_NAN.test(s)
          ? s.slice(-3).toLowerCase() === "nan"
            ? Number.NaN
            : s[0] === "-"
              ? Number.NEGATIVE_INFINITY
              : Number.POSITIVE_INFINITY
          : Number.parseFloat(s),
    }),
  ],
});

/**
 * Text the fast path does not take, found by a cheap scan that may say yes too often (the precise
 * parser then does the work) but never too rarely:
 * - a tag (`!foo`, `!!binary`): the precise parser refuses what is not plain YAML;
 * - a merge key (`<<: *base`): the precise parser merges as kubectl does;
 * - a directive (`%YAML`): the precise parser speaks YAML 1.2 whatever it says;
 * - a null-like mapping key (`~:`, `null:`): `yaml` makes it the key "", js-yaml "null";
 * - an alias as a mapping key (`*k : v`): the libraries spell a collection key differently;
 * - `__proto__`: each library guards it its own way.
 */
const PRECISE_ONLY: Array<[literal: string, pattern: RegExp]> = [
  ["!", /(?:^|[\s[\]{},:?-])!/m],
  ["<<", /<</],
  ["%", /^%/m],
  ["~", /(?:^|[\s{,?-])~\s*:(?:\s|$)/m],
  ["ull", /(?:^|[\s{,?-])[Nn]ull\s*:(?:\s|$)/m],
  ["NULL", /(?:^|[\s{,?-])NULL\s*:(?:\s|$)/m],
  ["*", /\*[^\s,[\]{}]+[ \t]+:/],
  ["__proto__", /__proto__/],
];

const SPACE = /\s/;
/** After these a `: v` is the empty key: a line's start, a space, `{`, `,`, `?` or `-`. */
const BEFORE_EMPTY_KEY = /[\s{,?-]/;

/**
 * Whether the text has an empty key (`: v`): `/(?:^|[\s{,?-]):(?:\s|$)/m`, spelled as a walk
 * over the colons, since a pattern that opens with an alternation is tried at every character of
 * the text (tens of milliseconds for a CRD set's megabytes, on every render).
 */
export function hasEmptyKey(text: string): boolean {
  for (let i = text.indexOf(":"); i >= 0; i = text.indexOf(":", i + 1)) {
    const before = text[i - 1];
    const after = text[i + 1];
    if ((before === undefined || BEFORE_EMPTY_KEY.test(before)) && (after === undefined || SPACE.test(after)))
      return true;
  }
  return false;
}

/** Whether the cheap scan leaves `text` to the precise parser; a pattern runs only where its literal occurs. */
function preciseOnly(text: string): boolean {
  return (
    PRECISE_ONLY.some(([literal, pattern]) => text.includes(literal) && pattern.test(text)) ||
    hasEmptyKey(text)
  );
}

/**
 * Where an alias (`*name`) may start: where a node may, at a line's start or after a space, `[`,
 * `{`, `,` or `:`. Not after `]` or `}`, where no node starts: `[0-9]*` is a scalar (a CRD's
 * quantity pattern), not an alias.
 */
const BEFORE_ALIAS = /[\s[{,:]/;

/** How many aliases may start in the text: `(?:^|[\s[{,:])\*` in every line, as a walk (see hasEmptyKey). */
export function aliasCount(text: string): number {
  let count = 0;
  for (let i = text.indexOf("*"); i >= 0; i = text.indexOf("*", i + 1)) {
    const before = text[i - 1];
    if (before === undefined || BEFORE_ALIAS.test(before)) count++;
  }
  return count;
}

/**
 * Both libraries share one object between an anchor and its aliases, but only `yaml` refuses a
 * document whose aliases expand too far (MAX_ALIAS_COUNT, "billion laughs"). Its count for an
 * alias is the product of the alias counts along a chain of nested anchors, each at most the
 * number of aliases in the document: with at most 12 aliases that product is at most 3^4 = 81,
 * under the limit of 100, so such a text can never be refused and js-yaml may read it.
 */
const MAX_FAST_ALIASES = 12;

export interface FastDocument {
  value: unknown;
  /** 1-based line where the document's content starts. */
  line: number;
}

/** The text's documents (nulls included), or undefined: the precise parser must read it. */
export function fastParseDocuments(text: string): FastDocument[] | undefined {
  if (preciseOnly(text) || aliasCount(text) > MAX_FAST_ALIASES) return undefined;
  const lines: number[] = [];
  const values: unknown[] = [];
  try {
    jsyaml.loadAll(text, (v) => values.push(v), {
      schema: CORE_12,
      // The root node of each document opens at depth 1, at its first character.
      listener(event, state) {
        if (event === "open" && (state as unknown as { depth: number }).depth === 1)
          lines.push(state.line + 1);
      },
    });
  } catch {
    return undefined;
  }
  if (lines.length !== values.length) return undefined;
  return values.map((value, i) => ({ value, line: lines[i]! }));
}

// What the shell should offer for the word being completed, from the same declarations the parser
// uses (so completion never disagrees with what is accepted). Pure: environment names come in as
// a function, read only when an ENV is being completed.
import type { CommandSpec } from "./spec.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;

export interface Typed {
  /** Options given so far (`--repo PATH` and `--repo=PATH`), for finding the config. */
  options: Record<string, string>;
}

/**
 * `words` are the words after `syncward`, the last being the one under the cursor (maybe "").
 * `environments` lists the config's environment names for the options typed so far.
 */
export async function candidates(
  root: Record<string, CommandSpec>,
  words: string[],
  environments: (typed: Typed) => Promise<string[]> | string[],
): Promise<string[]> {
  const current = words.at(-1) ?? "";
  let node: CommandSpec = { summary: "", verbs: root };
  const typed: Typed = { options: {} };
  let positional = 0;
  let awaiting: string | undefined;
  for (const word of words.slice(0, -1)) {
    if (awaiting !== undefined) {
      typed.options[awaiting] = word;
      awaiting = undefined;
    } else if (word.startsWith("--")) {
      const [name = "", value] = word.slice(2).split("=", 2);
      if (value !== undefined) typed.options[name] = value;
      else if (node.options?.[name]?.type === "string") awaiting = name;
    } else if (word.startsWith("-") && word.length === 2) {
      const long = Object.entries(node.options ?? {}).find(([, o]) => o.short === word[1])?.[0];
      if (long && node.options?.[long]?.type === "string") awaiting = long;
    } else if (node.verbs?.[word] && positional === 0) {
      node = node.verbs[word];
    } else {
      positional++;
    }
  }
  const matching = (list: readonly string[]) => list.filter((c) => c.startsWith(current));
  if (awaiting !== undefined) return matching(node.options?.[awaiting]?.choices ?? []);
  if (current.startsWith("-")) {
    const flags = Object.keys(node.options ?? {}).map((o) => `--${o}`);
    return matching([...flags, "--help", ...(node.verbs === root ? ["--version"] : [])]);
  }
  if (node.verbs && positional === 0) {
    return matching(Object.entries(node.verbs).flatMap(([name, spec]) => (spec.hidden ? [] : [name])));
  }
  const arg = node.args?.[positional] ?? node.args?.at(-1)?.match(/\.\.\.[>\]]$/)?.input;
  if (arg === "<ENV>") return matching(await environments(typed));
  if (arg === "<SHELL>") return matching(SHELLS);
  return [];
}

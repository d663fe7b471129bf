// How a command declares itself: options in node:util parseArgs' shape (one line each, with the
// text `--help` prints), its positionals, and a `run` that loads the implementation only when the
// command is invoked, so `syncward --help` never loads the engine or the Kubernetes client.
import type { CliIO } from "./io.ts";

export interface OptionSpec {
  type: "string" | "boolean";
  description: string;
  short?: string;
  /** The value's placeholder in help (`--revision REF`). */
  value?: string;
  choices?: readonly string[];
}

export type OptionSpecs = Record<string, OptionSpec>;

/** The parsed options of a spec, keyed by their long names like parseArgs' `values`. */
export type ValuesOf<S extends OptionSpecs> = {
  [K in keyof S]?: S[K]["type"] extends "boolean" ? boolean : string;
};

export type Values = Record<string, string | boolean | undefined>;

export interface Invocation {
  positionals: string[];
  values: Values;
  io: CliIO;
}

export interface CommandSpec {
  summary: string;
  /** Longer help text printed after the options. */
  details?: string;
  /** Positionals in commander's notation: `<ENV>` required, `[FILE...]` optional and variadic. */
  args?: readonly string[];
  options?: OptionSpecs;
  /** The verbs of a command group (`app get`, `app sync`, ...). */
  verbs?: Record<string, CommandSpec>;
  run?: (call: Invocation) => Promise<number>;
  hidden?: boolean;
}

/** The options a command shares with others, picked by name so each stays declared once. */
export function pick<S extends OptionSpecs, K extends keyof S & string>(specs: S, ...names: K[]): Pick<S, K> {
  return Object.fromEntries(names.map((n) => [n, specs[n]])) as Pick<S, K>;
}

/**
 * The command line a parser-of-its-own command expects, rebuilt from parsed values (`--name value`
 * and `--name`), so a command with a hand-written parser still gets declared options, help and
 * suggestions here.
 */
export function toArgv(values: Values): string[] {
  return Object.entries(values).flatMap(([name, value]) =>
    value === undefined || value === false ? [] : value === true ? [`--${name}`] : [`--${name}`, value],
  );
}

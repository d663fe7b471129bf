// Colour only where a person reads it: on a terminal, unless NO_COLOR is set (https://no-color.org);
// FORCE_COLOR turns it on anywhere (and FORCE_COLOR=0 off).
import type { CliIO } from "./io.ts";

export function colorEnabled(io: Pick<CliIO, "isTTY">, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force !== "false";
  return io.isTTY;
}

/** A unified diff with headers bold, hunks cyan, additions green and removals red. */
export function colorizeDiff(diff: string): string {
  return diff
    .split("\n")
    .map((line) => {
      if (line.startsWith("+++") || line.startsWith("---")) return `\x1b[1m${line}\x1b[0m`;
      if (line.startsWith("@@")) return `\x1b[36m${line}\x1b[0m`;
      if (line.startsWith("+")) return `\x1b[32m${line}\x1b[0m`;
      if (line.startsWith("-")) return `\x1b[31m${line}\x1b[0m`;
      return line;
    })
    .join("\n");
}

// A failed render's message goes to a check run, a comment, the log and history. kustomize quotes
// what it could not read: a generator's env-file line (`line [68 66 ...] has invalid utf8 bytes :
// DB_PASSWORD=...`, once as bytes and once as text), a literal, a file's content. Those are
// secrets as often as not, so every render problem passes through here (render.ts, one place):
// generator inputs are masked, and kustomize's own quoting is replaced by the file and line.

import { readFile } from "node:fs/promises";
import type { SourceProblem } from "./errors.ts";
import { relativeToTree } from "./tree-paths.ts";

const MASK = "********";
/** Shorter values would mask every "a" in a message and protect nothing. */
const MIN_LENGTH = 4;

export interface GeneratorInputs {
  /** Absolute paths of env files and files generators read. */
  files: string[];
  /** The values of `literals` (after `key=`), or the whole entry when it has no `=`. */
  literals: string[];
}

interface InputFile {
  rel: string;
  lines: Buffer[];
}

async function readInputs(treeReal: string, files: string[]): Promise<InputFile[]> {
  const out: InputFile[] = [];
  for (const abs of [...new Set(files)]) {
    const bytes = await readFile(abs).catch(() => undefined);
    if (!bytes) continue;
    const lines: Buffer[] = [];
    let start = 0;
    for (let i = 0; i <= bytes.length; i++)
      if (i === bytes.length || bytes[i] === 0x0a) {
        lines.push(bytes.subarray(start, i));
        start = i + 1;
      }
    out.push({ rel: relativeToTree(treeReal, abs), lines });
  }
  return out;
}

/** Where a line (as bytes) is: `db.env:2`, or `a generator input` when no file holds it. */
function placeOf(bytes: Buffer, inputs: InputFile[]): string {
  for (const file of inputs) {
    const i = file.lines.findIndex(
      (l) => l.equals(bytes) || l.equals(Buffer.concat([bytes, Buffer.from("\r")])),
    );
    if (i >= 0) return `${file.rel}:${i + 1}`;
  }
  return "a generator input";
}

/** The texts to mask: each line of each input file, the value after its `=`, each literal value. */
function needles(inputs: InputFile[], literals: string[]): string[] {
  const found = new Set<string>();
  const add = (text: string) => {
    const t = text.trim();
    if (t.length < MIN_LENGTH) return;
    found.add(t);
    found.add(JSON.stringify(t).slice(1, -1)); // as Go's %q or JSON escapes it
  };
  for (const file of inputs)
    for (const line of file.lines) {
      const text = line.toString("utf8");
      add(text);
      const eq = text.indexOf("=");
      if (eq >= 0) add(text.slice(eq + 1));
    }
  for (const literal of literals) add(literal);
  return [...found].sort((a, b) => b.length - a.length);
}

/** One message with kustomize's quoting replaced and generator inputs masked. */
export function scrubMessage(message: string, inputs: InputFile[], literals: string[]): string {
  let text = message.replace(
    /line \[([\d ]+)\] has invalid utf8 bytes : [^\n"]*/g,
    (_m, bytes: string) =>
      `${placeOf(Buffer.from(bytes.trim().split(/\s+/).map(Number)), inputs)} has invalid UTF-8 bytes (the line is not shown)`,
  );
  text = text.replace(
    /literal sources \[[\s\S]*\]: invalid literal source [\s\S]*, expected key=value/,
    "a generator literal is not key=value (its text is not shown)",
  );
  for (const needle of needles(inputs, literals)) text = text.split(needle).join(MASK);
  return text;
}

/** `problems` with every message scrubbed of the generator inputs of the render. */
export async function scrubRenderProblems(
  problems: SourceProblem[],
  treeReal: string,
  generator: GeneratorInputs,
): Promise<SourceProblem[]> {
  const inputs = await readInputs(treeReal, generator.files);
  return problems.map((p) => ({ ...p, message: scrubMessage(p.message, inputs, generator.literals) }));
}

// What a person watching the demo reads: headings, the commands with their real output, and one
// PASS or FAIL line per step of the story, then a summary.
import { StepFailure } from "./until.ts";

const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
export const bold = paint("1");
export const dim = paint("2");
export const green = paint("32");
export const red = paint("31");
export const yellow = paint("33");

export function say(text = ""): void {
  process.stdout.write(`${text}\n`);
}

export function heading(text: string): void {
  say();
  say(bold(`== ${text} ${"=".repeat(Math.max(3, 90 - text.length))}`));
}

/** A command as the person would type it, then its output, indented. */
export function showCommand(command: string, output: string): void {
  say(bold(`$ ${command}`));
  const text = output.replace(/\s+$/, "");
  if (text) say(text.replace(/^/gm, "    "));
}

export interface StepResult {
  id: string;
  title: string;
  status: "PASS" | "FAIL" | "SKIP";
  detail: string;
  ms?: number;
}

/**
 * Collects the problems a step finds: `expect` records a failed expectation and lets the step go
 * on (so one run reports everything that is wrong), a thrown StepFailure ends the step.
 */
export class Checks {
  readonly problems: string[] = [];
  readonly notes: string[] = [];

  expect(ok: boolean, problem: string): boolean {
    if (!ok) this.problems.push(problem);
    return ok;
  }

  note(text: string): void {
    this.notes.push(text);
  }
}

export class Story {
  readonly results: StepResult[] = [];
  /** Set on Ctrl-C: steps still running print nothing more. */
  interrupted = false;

  /** Runs one step of the story; returns whether it passed. */
  async step(id: string, title: string, body: (checks: Checks) => Promise<void>): Promise<boolean> {
    if (this.interrupted) return false;
    heading(`4${id}. ${title}`);
    const checks = new Checks();
    const started = Date.now();
    try {
      await body(checks);
    } catch (err) {
      if (this.interrupted) return false;
      checks.problems.push(
        err instanceof StepFailure
          ? err.message
          : `unexpected error: ${err instanceof Error ? err.stack : err}`,
      );
    }
    if (this.interrupted) return false;
    const ok = checks.problems.length === 0;
    const detail = ok ? checks.notes.join("; ") : checks.problems.join("; ");
    const ms = Date.now() - started;
    this.results.push({ id, title, status: ok ? "PASS" : "FAIL", detail, ms });
    say();
    say(ok ? green(`PASS  ${id}. ${title}: ${detail}`) : red(`FAIL  ${id}. ${title}: ${detail}`));
    return ok;
  }

  skip(id: string, title: string, why: string): void {
    this.results.push({ id, title, status: "SKIP", detail: why });
  }

  get failed(): StepResult[] {
    return this.results.filter((r) => r.status !== "PASS");
  }

  summary(elapsedMs: number, setupError?: string): void {
    heading("Summary");
    if (setupError) say(red(`FAIL  setup: ${setupError}`));
    for (const r of this.results) {
      const took = r.ms === undefined ? "" : ` (${(r.ms / 1000).toFixed(1)}s)`;
      const line = `${r.status.padEnd(4)}  ${r.id}. ${r.title}${took}`;
      say(
        r.status === "PASS"
          ? green(line)
          : r.status === "FAIL"
            ? red(`${line}: ${r.detail}`)
            : yellow(`${line}: ${r.detail}`),
      );
    }
    const passed = this.results.filter((r) => r.status === "PASS").length;
    say();
    say(bold(`${passed}/${this.results.length} steps passed in ${(elapsedMs / 1000).toFixed(0)}s`));
  }
}

// `syncward controller` as a child process: each line it prints is shown prefixed and kept, so
// the story can wait for the line that proves a step; its JSON logs (stderr) go to a file.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { dim, say } from "./story.ts";
import { StepFailure, sleep } from "./until.ts";

export class ControllerProcess {
  readonly lines: string[] = [];
  private exited: string | undefined;
  private partial = "";
  private readonly closed: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      const text = this.partial + chunk;
      const parts = text.split("\n");
      this.partial = parts.pop() ?? "";
      for (const line of parts) {
        this.lines.push(line);
        say(dim(`  controller | ${line}`));
      }
    });
    this.closed = new Promise((resolve) => {
      child.on("close", (code, signal) => {
        if (this.partial) say(dim(`  controller | ${this.partial}`));
        this.exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
        resolve();
      });
    });
  }

  /** Starts `node <bin> controller ...args`, logging stderr to `logFile`. */
  static start(bin: string, args: string[], logFile: string, cwd: string): ControllerProcess {
    const fd = openSync(logFile, "a");
    const child = spawn(process.execPath, [bin, "controller", ...args], {
      cwd,
      stdio: ["ignore", "pipe", fd],
    });
    closeSync(fd);
    return new ControllerProcess(child);
  }

  /** A position in the output: `waitFor` only looks at lines printed after it. */
  mark(): number {
    return this.lines.length;
  }

  /** The output printed since `from`, one string. */
  since(from: number): string {
    return this.lines.slice(from).join("\n");
  }

  /** Waits for a line matching `pattern` after `from`; fails fast if the controller died. */
  async waitFor(pattern: RegExp, from: number, what: string, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.slice(from).find((l) => pattern.test(l));
      if (hit !== undefined) return hit;
      if (this.exited) throw new StepFailure(`${what}: the controller ${this.exited}`);
      if (Date.now() >= deadline)
        throw new StepFailure(`${what}: no controller line matching ${pattern} within ${timeoutMs / 1000}s`);
      await sleep(200);
    }
  }

  get running(): boolean {
    return this.exited === undefined;
  }

  /** SIGTERM (the controller stops cleanly), SIGKILL after 5 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    this.child.kill("SIGTERM");
    const killed = await Promise.race([this.closed.then(() => false), sleep(5000).then(() => true)]);
    if (killed) {
      this.child.kill("SIGKILL");
      await this.closed;
    }
  }
}

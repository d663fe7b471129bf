// Runs a command to completion and hands back its exit code and output. Every child still
// running is remembered, so an interrupted demo can stop exactly what it started.
import { type ChildProcess, spawn } from "node:child_process";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Killed (and reported as exit code 124) after this long; default 60 s; 0: never (a build). */
  timeoutMs?: number;
  /** Called with each line the command writes to stderr, as it writes it (a build's progress). */
  progress?: (line: string) => void;
}

const running = new Set<ChildProcess>();

/** How long run() lets a command take, in ms; 0: no limit. */
export function timeLimitMs(options: RunOptions): number {
  return options.timeoutMs ?? 60_000;
}

export function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    let partial = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
      if (!options.progress) return;
      const lines = (partial + c).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) options.progress(line);
    });
    const limit = timeLimitMs(options);
    const timer =
      limit > 0
        ? setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, limit)
        : undefined;
    child.on("error", (err) => {
      stderr += `${file}: ${err.message}\n`;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      running.delete(child);
      if (partial) options.progress?.(partial);
      if (timedOut) stderr += `${file} timed out after ${limit / 1000}s\n`;
      resolve({ code: timedOut ? 124 : (code ?? 1), stdout, stderr });
    });
  });
}

/** Kills every child `run` started that has not finished yet (on Ctrl-C). */
export function killRunning(): void {
  for (const child of running) child.kill("SIGTERM");
}

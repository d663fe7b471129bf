// Running git, tar and kubectl: argument vectors only, never a shell, never syncward's secrets in
// the environment; a command marked `isolate` runs without network (render-sandbox.ts).

import { execFile, spawn } from "node:child_process";
import { childEnvironment, isolatedCommand, missingUnderUnshare } from "./render-sandbox.ts";

export interface Command {
  file: string;
  args: string[];
  cwd?: string;
  timeoutMs?: number;
  /** Standard output beyond this many bytes kills the program (`run` only; default 512 MiB). */
  maxOutputBytes?: number;
  /** Variables added to (or, when undefined, removed from) the child's environment. */
  env?: Record<string, string | undefined>;
  /** Reads untrusted input: no network (a fresh network namespace where possible), no proxy, no git transport. */
  isolate?: boolean;
}

export interface RunResult {
  ok: boolean;
  /** Exit code, or null when the process was killed or never started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The program was killed for writing more than `maxOutputBytes`. */
  tooMuchOutput?: boolean;
  /** Set when the program could not be started at all (ENOENT: not installed). */
  spawnError?: NodeJS.ErrnoException;
}

const MAX_OUTPUT = 512 * 1024 * 1024;

/** The environment for child processes: no prompts, no pagers, C locale, no secrets. */
function childEnv(cmd: Command): NodeJS.ProcessEnv {
  return childEnvironment(cmd.env, cmd.isolate);
}

/** `cmd` as it is started: wrapped in the network sandbox when it reads untrusted input. */
async function prepared(cmd: Command): Promise<Command> {
  if (!cmd.isolate) return cmd;
  return { ...cmd, ...(await isolatedCommand(cmd.file, cmd.args)) };
}

/** A program unshare could not start looks as if it had been spawned directly: ENOENT. */
function unwrapped(result: RunResult, cmd: Command): RunResult {
  if (!cmd.isolate || result.ok || !missingUnderUnshare(result.stderr)) return result;
  const spawnError = Object.assign(new Error(`spawn ${cmd.file} ENOENT`), { code: "ENOENT" });
  return { ...result, spawnError };
}

/** Runs a program to completion and collects its output; never rejects (except when isolation is required and unavailable). */
export async function run(original: Command): Promise<RunResult> {
  const cmd = await prepared(original);
  return unwrapped(await runPrepared(cmd), original);
}

function runPrepared(cmd: Command): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd.file,
      cmd.args,
      {
        cwd: cmd.cwd,
        env: childEnv(cmd),
        timeout: cmd.timeoutMs ?? 0,
        killSignal: "SIGKILL",
        maxBuffer: cmd.maxOutputBytes ?? MAX_OUTPUT,
        encoding: "utf8",
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ ok: true, code: 0, stdout, stderr, timedOut: false });
          return;
        }
        const err = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
        const tooMuchOutput = err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER";
        const spawnFailed = typeof err.code === "string" && !tooMuchOutput;
        resolve({
          ok: false,
          code: typeof err.code === "number" ? err.code : null,
          stdout: stdout ?? "",
          stderr: stderr ?? "",
          timedOut: !tooMuchOutput && Boolean(err.killed) && cmd.timeoutMs !== undefined && cmd.timeoutMs > 0,
          ...(tooMuchOutput ? { tooMuchOutput } : {}),
          ...(spawnFailed ? { spawnError: err } : {}),
        });
      },
    );
  });
}

interface Spawned {
  result: Promise<RunResult>;
  child: ReturnType<typeof spawn>;
}

function spawnCollect(cmd: Command, stdin: "pipe" | "ignore", collectStdout = true): Spawned {
  const child = spawn(cmd.file, cmd.args, {
    cwd: cmd.cwd,
    env: childEnv(cmd),
    stdio: [stdin, "pipe", "pipe"],
    windowsHide: true,
  });
  const result = new Promise<RunResult>((resolve) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    const timer =
      cmd.timeoutMs && cmd.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, cmd.timeoutMs)
        : undefined;
    if (collectStdout) {
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        if (stdout.length < MAX_OUTPUT) stdout += chunk;
      });
    }
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on("error", (err: NodeJS.ErrnoException) => {
      spawnError = err;
    });
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      resolve({
        ok: code === 0 && !timedOut && !spawnError,
        code,
        stdout,
        stderr,
        timedOut,
        ...(spawnError ? { spawnError } : {}),
      });
    });
  });
  return { result, child };
}

/** Runs `cmd` with `input` on its standard input. */
export async function runWithInput(cmd: Command, input: Uint8Array): Promise<RunResult> {
  const { result, child } = spawnCollect(await prepared(cmd), "pipe");
  child.stdin?.on("error", () => {
    // The program exited before reading everything; its exit status tells what went wrong.
  });
  child.stdin?.end(input);
  return result;
}

/**
 * Runs `cmd` with the chunks of `input` on its standard input as they arrive (backpressure kept).
 * Past `maxBytes` the program is killed and `overLimit` is set; `input` is not read further.
 */
export async function runWithStream(
  cmd: Command,
  input: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<RunResult & { overLimit?: boolean; bytes: number; inputError?: Error }> {
  const { result, child } = spawnCollect(await prepared(cmd), "pipe");
  const stdin = child.stdin;
  stdin?.on("error", () => {
    // The program exited before reading everything; its exit status tells what went wrong.
  });
  let bytes = 0;
  let overLimit = false;
  let inputError: Error | undefined;
  try {
    for await (const chunk of input) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) {
        overLimit = true;
        child.kill("SIGKILL");
        break;
      }
      if (!stdin || stdin.destroyed) break;
      if (!stdin.write(chunk)) await drained(stdin);
    }
  } catch (err) {
    // The input refused to go on (a limit crossed, the download broke): the program stops with it.
    inputError = err as Error;
    child.kill("SIGKILL");
  } finally {
    stdin?.end();
  }
  return {
    ...(await result),
    bytes,
    ...(overLimit ? { overLimit, ok: false } : {}),
    ...(inputError ? { inputError, ok: false } : {}),
  };
}

/**
 * Until the pipe takes more or closes. Neither listener outlives the wait: a large input waits
 * thousands of times on one pipe, and a listener left from each would pile up (and warn).
 */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done).on("close", done);
  });
}

/** Starts `cmd` and hands over its standard output as a stream (for a consumer of its own). */
export async function runProducer(
  cmd: Command,
): Promise<{ stdout: NodeJS.ReadableStream; result: Promise<RunResult> }> {
  const { result, child } = spawnCollect(await prepared(cmd), "ignore", false);
  if (!child.stdout) throw new Error(`${cmd.file}: no standard output`);
  return { stdout: child.stdout, result };
}

/** Runs `from | to` without a shell and returns both results. */
export async function runPipe(from: Command, to: Command): Promise<[RunResult, RunResult]> {
  const producer = spawnCollect(await prepared(from), "ignore", false);
  const consumer = spawnCollect(await prepared(to), "pipe");
  consumer.child.stdin?.on("error", () => {
    // `to` died early (EPIPE); both exit statuses are reported.
  });
  if (producer.child.stdout && consumer.child.stdin) {
    producer.child.stdout.pipe(consumer.child.stdin);
  }
  return Promise.all([producer.result, consumer.result]);
}

/** The first useful line(s) of a failed run, for error messages. */
export function failureText(result: RunResult): string {
  if (result.spawnError) return result.spawnError.message;
  if (result.timedOut) return "timed out";
  const text = result.stderr.trim();
  return text || `exited with status ${result.code ?? "unknown"}`;
}

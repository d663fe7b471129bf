// The worker thread that runs jq (jq 1.7.1 compiled to WebAssembly by jq-wasm). It lives in its own
// thread so that the caller can stop it at a deadline (an expression from a repository's config
// may loop for ever), and is thrown away after any failure, so one expression never sees state
// another left behind. jq-wasm's glue is loaded from patched source: its stdin and stdout copy the
// whole buffer for every byte (quadratic in the object's size), and its heap may grow to 256 MB.
// Each patch names the exact text it replaces: another jq-wasm refuses to start instead.
//
// The thread runs workerMain's source as a script (`eval`), so that the same file works compiled
// and under tsx (whose loader a worker does not inherit on Node 20): workerMain refers to nothing
// outside itself, and gets its settings through workerData.

import { createRequire } from "node:module";

export interface JqRequest {
  program: string;
  input: string;
}
export type JqResponse =
  | { kind: "ready" }
  | { kind: "done"; status: number; stdout: string; stderr: string; overflow: boolean; retire: boolean }
  | { kind: "crashed"; message: string };

/** Heap the evaluation may use (jq-wasm's own build allows 256 MB). */
export const HEAP_BYTES = 128 * 1024 * 1024;
/** A thread whose heap has grown past this is replaced after its answer. */
const RETIRE_BYTES = 32 * 1024 * 1024;
/** Output beyond this is not kept (the program prints one array of paths, capped in count). */
const OUTPUT_BYTES = 16 * 1024 * 1024;
const ERROR_BYTES = 64 * 1024;

const IO_GLOBAL = "__syncwardJqIo";
export const PATCHES: Array<[from: string, to: string]> = [
  // callMain is meant to run once: it leaves argv on the stack. Put the stack pointer back after
  // each run (the build exports no stackRestore; stackAlloc(negative) moves the pointer up), and
  // say how large the heap has grown, so that a thread jq's allocations have grown is retired.
  [
    'Module["callMain"] = callMain;',
    'Module["callMain"] = (args) => { var sp = stackAlloc(0); try { return callMain(args); } finally { stackAlloc(stackAlloc(0) - sp); } }; Module["heapBytes"] = () => HEAPU8.length;',
  ],
  ["var getHeapMax = () => 268435456;", `var getHeapMax = () => ${HEAP_BYTES};`],
  // Its messages (an abort's) stay in the thread instead of the app's log; the three per-byte stream callbacks.
  [
    `console.error(message); }, preRun() { FS.init(() => { if (stdinBuffer.length > 0) {
                const byte = stdinBuffer[0];
                stdinBuffer = stdinBuffer.slice(1);
                return byte;
            } return null; }, charCode => { if (charCode !== null && charCode !== undefined) {
                const tmp = new Uint8Array(stdoutBuffer.length + 1);
                tmp.set(stdoutBuffer, 0);
                tmp[tmp.length - 1] = charCode;
                stdoutBuffer = tmp;
            } }, charCode => { if (charCode !== null && charCode !== undefined) {
                const tmp = new Uint8Array(stderrBuffer.length + 1);
                tmp.set(stderrBuffer, 0);
                tmp[tmp.length - 1] = charCode;
                stderrBuffer = tmp;
            } }); }`,
    `${IO_GLOBAL}.log(message); }, preRun() { FS.init(${IO_GLOBAL}.stdin, ${IO_GLOBAL}.stdout, ${IO_GLOBAL}.stderr); }`,
  ],
];

export interface WorkerSettings {
  glue: string;
  patches: Array<[string, string]>;
  ioGlobal: string;
  outputBytes: number;
  errorBytes: number;
  retireBytes: number;
  port: unknown;
  flag: SharedArrayBuffer;
}

/** The worker's whole program; `require` is the script's own. */
function workerMain(require: NodeJS.Require): void {
  const { readFileSync } = require("node:fs") as typeof import("node:fs");
  const { dirname } = require("node:path") as typeof import("node:path");
  const { runInThisContext } = require("node:vm") as typeof import("node:vm");
  const { workerData } = require("node:worker_threads") as typeof import("node:worker_threads");
  const settings = workerData as WorkerSettings;
  const port = settings.port as import("node:worker_threads").MessagePort;
  const flag = new Int32Array(settings.flag);

  class Sink {
    buf = new Uint8Array(4096);
    length = 0;
    overflow = false;
    constructor(readonly cap: number) {}
    write(byte: number | null | undefined): void {
      if (byte === null || byte === undefined) return;
      if (this.length >= this.cap) {
        this.overflow = true;
        return;
      }
      if (this.length === this.buf.length) {
        const grown = new Uint8Array(Math.min(this.cap, this.buf.length * 2));
        grown.set(this.buf);
        this.buf = grown;
      }
      this.buf[this.length++] = byte;
    }
    text(): string {
      return new TextDecoder().decode(this.buf.subarray(0, this.length));
    }
  }

  let input = new Uint8Array(0);
  let position = 0;
  let stdout = new Sink(settings.outputBytes);
  let stderr = new Sink(settings.errorBytes);
  const io = {
    stdin: () => (position < input.length ? input[position++] : null),
    stdout: (byte: number | null) => stdout.write(byte),
    stderr: (byte: number | null) => stderr.write(byte),
    log: (message: unknown) => {
      for (const byte of new TextEncoder().encode(`${String(message)}\n`)) stderr.write(byte);
    },
  };

  interface JqModule {
    callMain(args: string[]): number;
    heapBytes(): number;
  }

  const reply = (response: JqResponse) => {
    port.postMessage(response);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  };
  const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

  async function load(): Promise<JqModule> {
    let source = readFileSync(settings.glue, "utf8");
    for (const [from, to] of settings.patches) {
      const at = source.indexOf(from);
      if (at < 0 || source.indexOf(from, at + 1) >= 0) {
        throw new Error(`jq-wasm's glue is not the pinned 1.0.1 (no single "${from.slice(0, 40)}...")`);
      }
      source = source.slice(0, at) + to + source.slice(at + from.length);
    }
    const wrapper = runInThisContext(
      `(function (module, exports, require, __filename, __dirname, ${settings.ioGlobal}) {${source}\n})`,
      { filename: settings.glue },
    ) as (...args: unknown[]) => void;
    const mod: { exports: unknown } = { exports: {} };
    wrapper(mod, mod.exports, require, settings.glue, dirname(settings.glue), io);
    return (mod.exports as () => Promise<JqModule>)();
  }

  function run(jq: JqModule, request: JqRequest): JqResponse {
    input = new TextEncoder().encode(request.input);
    position = 0;
    stdout = new Sink(settings.outputBytes);
    stderr = new Sink(settings.errorBytes);
    const status = jq.callMain(["-c", "-M", request.program, "/dev/stdin"]);
    const retire = jq.heapBytes() > settings.retireBytes;
    return {
      kind: "done",
      status,
      stdout: stdout.text(),
      stderr: stderr.text(),
      overflow: stdout.overflow,
      retire,
    };
  }

  load().then(
    (jq) => {
      port.on("message", (request: JqRequest) => {
        try {
          reply(run(jq, request));
        } catch (err) {
          // An abort (out of memory) or a stack overflow: the engine discards this thread.
          reply({ kind: "crashed", message: message(err) });
        }
      });
      reply({ kind: "ready" });
    },
    (err: unknown) => reply({ kind: "crashed", message: message(err) }),
  );
}

/** The script a worker runs, and the settings it reads from workerData (but the port and flag). */
export function workerScript(): { source: string; settings: Omit<WorkerSettings, "port" | "flag"> } {
  const glue = createRequire(import.meta.url).resolve("jq-wasm/dist/build/jq.js");
  return {
    // tsx compiles functions with name-keeping helper calls; a script has no such helper.
    source: `var __name = (f) => f;\n(${workerMain.toString()})(require);`,
    settings: {
      glue,
      patches: PATCHES,
      ioGlobal: IO_GLOBAL,
      outputBytes: OUTPUT_BYTES,
      errorBytes: ERROR_BYTES,
      retireBytes: RETIRE_BYTES,
    },
  };
}

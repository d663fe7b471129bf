// Runs a jq program synchronously on the worker thread (jq-worker.ts) with a deadline: the caller
// (the comparison, which is synchronous) blocks on a shared flag until the worker answers or the
// deadline passes; then the worker is terminated and the next evaluation starts a fresh one.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { type JqRequest, type JqResponse, workerScript } from "./jq-worker.ts";

/** Argo CD's default for ignore.normalizer.jq.timeout. */
export const JQ_DEADLINE_MS = 1000;
/** Loading the engine (compiling its WebAssembly) is not the expression's time. */
const STARTUP_MS = 15_000;

export type JqOutcome =
  | { kind: "done"; status: number; stdout: string; stderr: string; overflow: boolean; retire: boolean }
  | { kind: "timeout" }
  | { kind: "crashed"; message: string };

interface Engine {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
}
let engine: Engine | undefined;

function stop(e: Engine): void {
  if (engine === e) engine = undefined;
  e.port.close();
  void e.worker.terminate();
}

/** Waits for the worker's next answer; undefined when it did not come in time. */
function await_(e: Engine, ms: number): JqResponse | undefined {
  const woke = Atomics.wait(e.flag, 0, 0, ms);
  if (woke === "timed-out") return undefined;
  return receiveMessageOnPort(e.port)?.message as JqResponse | undefined;
}

function start(): Engine | { kind: "crashed"; message: string } {
  const flagBuffer = new SharedArrayBuffer(4);
  const channel = new MessageChannel();
  const script = workerScript();
  const worker = new Worker(script.source, {
    eval: true,
    workerData: { ...script.settings, port: channel.port2, flag: flagBuffer },
    transferList: [channel.port2],
    // jq's heap is WebAssembly memory (capped in the worker); this bounds the thread's own JavaScript.
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
  });
  worker.unref();
  channel.port1.unref();
  const e: Engine = { worker, port: channel.port1, flag: new Int32Array(flagBuffer) };
  const ready = await_(e, STARTUP_MS);
  if (ready?.kind !== "ready") {
    stop(e);
    return {
      kind: "crashed",
      message: ready?.kind === "crashed" ? ready.message : "the jq engine did not start",
    };
  }
  return e;
}

/** Runs `program` on `input` (JSON text); any outcome but a normal exit discards the worker. */
export function runJq(program: string, input: string, deadlineMs = JQ_DEADLINE_MS): JqOutcome {
  if (!engine) {
    const started = start();
    if ("kind" in started) return started;
    engine = started;
  }
  const e = engine;
  Atomics.store(e.flag, 0, 0);
  e.port.postMessage({ program, input } satisfies JqRequest);
  const answer = await_(e, deadlineMs);
  if (!answer) {
    stop(e);
    return { kind: "timeout" };
  }
  if (answer.kind !== "done") {
    stop(e);
    return { kind: "crashed", message: answer.kind === "crashed" ? answer.message : "unexpected answer" };
  }
  if (answer.retire) stop(e);
  return answer;
}

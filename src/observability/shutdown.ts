// How a syncward process stops on SIGTERM (a rolling update, a node drain) or SIGINT: readiness
// fails first, so the Service sends webhooks to the other replicas; then each step runs in order
// (close the webhook listener, stop the reconcile loops, which lets the current wave's writes finish
// and stops the sync at its next wait, recorded in history, then releases every Lease); the process
// exits 0 when all are done. The whole stop is bounded below the Pod's termination grace period, so
// the kubelet never has to SIGKILL a replica that still holds Leases.
import { formatDuration, parseDuration } from "../config/duration.ts";

/** The default bound, below deploy/'s terminationGracePeriodSeconds (30). */
export const DEFAULT_STOP_TIMEOUT_MS = 25_000;

/** SYNCWARD_STOP_TIMEOUT as milliseconds; a malformed value stops the process at start. */
export function stopTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.SYNCWARD_STOP_TIMEOUT;
  if (text === undefined || text === "") return DEFAULT_STOP_TIMEOUT_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000)
    throw new Error(
      `SYNCWARD_STOP_TIMEOUT: "${text}" is not a duration of at least 1s (e.g. 25s); keep it below the Pod's terminationGracePeriodSeconds`,
    );
  return ms;
}

interface StopLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown> | unknown;
}

export class Shutdown {
  /** True from the signal on: readiness fails and webhook deliveries are refused. */
  stopping = false;
  private readonly steps: ShutdownStep[] = [];
  private running: Promise<number> | undefined;

  constructor(private readonly o: { log: StopLog; timeoutMs: number; exit?: (code: number) => void }) {}

  /** Steps run in the order they were added. */
  add(name: string, run: ShutdownStep["run"]): void {
    this.steps.push({ name, run });
  }

  /** A step that runs before those added so far (the webhook listener, added once the server runs). */
  first(name: string, run: ShutdownStep["run"]): void {
    this.steps.unshift({ name, run });
  }

  /** Runs every step within the bound; 0 when all finished, 1 when the bound was reached first. */
  stop(reason: string): Promise<number> {
    this.running ??= this.runSteps(reason);
    return this.running;
  }

  /** Stops on the first SIGTERM or SIGINT and exits with stop()'s code. */
  listen(): void {
    const exit = this.o.exit ?? ((code: number) => process.exit(code));
    const on = (signal: NodeJS.Signals) => void this.stop(signal).then(exit);
    process.once("SIGTERM", on);
    process.once("SIGINT", on);
  }

  private async runSteps(reason: string): Promise<number> {
    this.stopping = true;
    const { log, timeoutMs } = this.o;
    const started = Date.now();
    log.info(
      { signal: reason, timeoutMs },
      `stopping: readiness fails; at most ${formatDuration(timeoutMs)}`,
    );
    let current = "";
    const steps = (async () => {
      for (const step of this.steps) {
        current = step.name;
        await step.run();
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      if ((await Promise.race([steps, bound])) === "timeout") {
        log.error(
          { step: current, timeoutMs },
          `stopping took longer than SYNCWARD_STOP_TIMEOUT (${formatDuration(timeoutMs)}) at "${current}"; exiting anyway: Leases not yet released expire at their term`,
        );
        return 1;
      }
    } catch (err) {
      log.error({ err, step: current }, `stopping failed at "${current}"`);
      return 1;
    } finally {
      clearTimeout(timer);
    }
    log.info({ ms: Date.now() - started }, "stopped: every Lease released");
    return 0;
  }
}

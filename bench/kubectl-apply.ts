// `kubectl apply --server-side` of a directory, timed, with the requests it made read from its
// -v=6 log (kubectl sends one request at a time and logs each with its duration).
import { type BenchContext, kubectl } from "./support.ts";

export interface KubectlApply {
  ms: number;
  cpuMs?: number;
  maxRssKiB?: number;
  /** From its -v=6 log: time from its first log line to its first write (discovery, OpenAPI). */
  beforeFirstWriteMs?: number;
  /** Sum of the request durations it logged (it sends one request at a time). */
  requestMs: number;
  writes: number;
  requests: number;
  byVerb: Record<string, number>;
}

const REQUEST_LINE =
  /round_trippers\.go:\d+\] (GET|PATCH|POST|PUT|DELETE) https?:\/\/\S+ .* in (\d+) milliseconds/;
/** klog's `I1129 18:30:31.040073` prefix, as ms since midnight. */
const KLOG_TIME = /^[IWE]\d{4} (\d{2}):(\d{2}):(\d{2})\.(\d{6})/;

function klogMs(line: string): number | undefined {
  const m = KLOG_TIME.exec(line);
  if (!m) return undefined;
  const [h, min, sec, micros] = m.slice(1).map(Number) as [number, number, number, number];
  return ((h * 60 + min) * 60 + sec) * 1000 + micros / 1000;
}
const WRITE_VERBS = new Set(["PATCH", "POST", "PUT", "DELETE"]);

/** `validate: false` adds --validate=false (kubectl's default is strict). */
export async function kubectlApply(
  ctx: BenchContext,
  dir: string,
  namespace: string,
  validate: boolean,
): Promise<KubectlApply> {
  const run = await kubectl(ctx, [
    "apply",
    "--server-side",
    "--field-manager=bench",
    ...(validate ? [] : ["--validate=false"]),
    "-n",
    namespace,
    "-R",
    "-f",
    dir,
    "-v=6",
  ]);
  const byVerb: Record<string, number> = {};
  let requestMs = 0;
  let firstLine: number | undefined;
  let firstWrite: number | undefined;
  for (const line of run.stderr.split("\n")) {
    firstLine ??= klogMs(line);
    const m = REQUEST_LINE.exec(line);
    if (!m) continue;
    const verb = m[1] as string;
    byVerb[verb] = (byVerb[verb] ?? 0) + 1;
    requestMs += Number(m[2]);
    if (WRITE_VERBS.has(verb)) firstWrite ??= klogMs(line);
  }
  const count = (verbs: string[]) => verbs.reduce((sum, v) => sum + (byVerb[v] ?? 0), 0);
  return {
    ms: run.ms,
    cpuMs: run.cpuMs,
    maxRssKiB: run.maxRssKiB,
    beforeFirstWriteMs:
      firstLine !== undefined && firstWrite !== undefined ? firstWrite - firstLine : undefined,
    requestMs,
    writes: count([...WRITE_VERBS]),
    requests: count(["GET", ...WRITE_VERBS]),
    byVerb,
  };
}

// Helm render time: a chart of 200 objects against plain YAML of the same objects, both through
// syncward's render (helm template in its sandbox vs reading the files). The chart's templates are the
// very manifests of the plain folder (the cold-sync benchmark's apps), so both renders produce the same
// objects and the difference is what helm costs: its process, template engine and output parsing.
// No cluster. Wall-clock medians over the trials; a first untimed render of each warms the caches.
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { keyOf, keyString } from "../src/kube/object.ts";
import { render } from "../src/source/render.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import { type BenchContext, type BenchResult, median, progress } from "./support.ts";

export async function helmRender(ctx: BenchContext): Promise<BenchResult> {
  const apps = Number(process.env.SYNCWARD_BENCH_HELM_APPS ?? 40);
  const trials = Number(process.env.SYNCWARD_BENCH_HELM_TRIALS ?? (ctx.quick ? 5 : 20));
  const dir = writeManifests(apps);
  try {
    // plain/: the manifests; chart/: a chart whose templates are those manifests.
    mkdirSync(join(dir, "chart", "templates"), { recursive: true });
    for (const team of readdirSync(dir).filter((d) => d.startsWith("team-"))) {
      cpSync(join(dir, team), join(dir, "plain", team), { recursive: true });
      cpSync(join(dir, team), join(dir, "chart", "templates", team), { recursive: true });
      rmSync(join(dir, team), { recursive: true });
    }
    writeFileSync(join(dir, "chart", "Chart.yaml"), "apiVersion: v2\nname: bench\nversion: 1.0.0\n");
    const helmContext = { releaseName: "bench", namespace: "bench", capabilities: async () => undefined };
    const keys = (objects: Awaited<ReturnType<typeof render>>["objects"]) =>
      objects.map((o) => keyString(keyOf(o))).sort();
    const plainKeys = keys((await render(dir, "plain")).objects);
    const chartKeys = keys((await render(dir, "chart", { helmContext })).objects);
    if (plainKeys.length !== apps * KINDS_PER_APP || plainKeys.join() !== chartKeys.join())
      throw new Error("the chart and the plain folder do not render the same objects");
    const plain: number[] = [];
    const chart: number[] = [];
    for (let i = 0; i < trials; i++) {
      let t = performance.now();
      await render(dir, "plain");
      plain.push(performance.now() - t);
      t = performance.now();
      await render(dir, "chart", { helmContext });
      chart.push(performance.now() - t);
      progress(
        `helm render trial ${i + 1}/${trials}: plain ${plain.at(-1)?.toFixed(0)} ms, chart ${chart.at(-1)?.toFixed(0)} ms`,
      );
    }
    const ratios = chart.map((c, i) => c / (plain[i] ?? c));
    return {
      measurements: [
        {
          name: `render ${plainKeys.length} objects: Helm chart vs plain YAML`,
          unit: "ms",
          syncward: median(chart),
          baseline: { name: "plain YAML", value: median(plain) },
          ratio: median(ratios),
          ratioMeaning: "chart render time / plain YAML render time",
          samples: { syncward: chart, baseline: plain, ratio: ratios },
        },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

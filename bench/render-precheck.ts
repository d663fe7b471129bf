// The reference pre-check's cost against the whole kustomize render, on the engine benchmark's
// repository (1,000 objects in 10 team folders) laid out as kustomizations: a root overlay over a
// kustomization per team, with a patch, a generator and a component.
//   node --import tsx bench/render-precheck.ts
import { mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { precheckKustomizations } from "../src/source/kustomize-precheck.ts";
import { render } from "../src/source/render.ts";
import { writeManifests } from "./manifests.ts";

const root = realpathSync(writeManifests(Number(process.env.APPS ?? 200)));
const teams = readdirSync(root).filter((n) => n.startsWith("team-"));
for (const team of teams) {
  const files = readdirSync(join(root, team)).filter((n) => n.endsWith(".yaml"));
  writeFileSync(
    join(root, team, "kustomization.yaml"),
    `resources:\n${files.map((f) => `  - ${f}\n`).join("")}`,
  );
}
mkdirSync(join(root, "component"));
writeFileSync(
  join(root, "component", "kustomization.yaml"),
  "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  owner: platform\n",
);
writeFileSync(join(root, "settings.env"), "LOG_LEVEL=info\nREGION=eu-west-1\n");
writeFileSync(
  join(root, "patch.yaml"),
  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-0000-config\ndata:\n  LOG_LEVEL: debug\n",
);
writeFileSync(
  join(root, "kustomization.yaml"),
  `resources:\n${teams.map((t) => `  - ${t}\n`).join("")}components:\n  - component\npatches:\n  - path: patch.yaml\nconfigMapGenerator:\n  - name: settings\n    envs: [settings.env]\n`,
);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
async function time(runs: number, f: () => Promise<unknown>): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await f();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(out);
}

const options = { timeoutMs: 300_000 };
await render(root, ".", options); // warm
const renderMs = await time(3, () => render(root, ".", options));
const precheckMs = await time(11, () => precheckKustomizations(root, root));
const objects = (await render(root, ".", options)).objects.length;
console.log(
  JSON.stringify({
    objects,
    renderMs: Math.round(renderMs),
    precheckMs: Math.round(precheckMs * 10) / 10,
    share: `${((precheckMs / renderMs) * 100).toFixed(1)}%`,
  }),
);

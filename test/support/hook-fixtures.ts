// The hook fixture repositories (test/fixtures/hooks/*) as rendered objects, through the real
// manifest parser; `edit` changes the text first (a release bumping its image tag).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/object.ts";
import { parseManifests } from "../../src/source/parse-manifests.ts";

const ROOT = join(import.meta.dirname, "../fixtures/hooks");

export function hookFixture(name: string, edit: (text: string) => string = (t) => t): KubeObject[] {
  const dir = join(ROOT, name);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => {
      const parsed = parseManifests(edit(readFileSync(join(dir, f), "utf8")), f);
      if (parsed.problems.length > 0) throw new Error(parsed.problems.map((p) => p.message).join("; "));
      return parsed.objects.map((o) => o.object);
    });
}

/** Makes every pod of the objects' Jobs fail on the local plane (tools/cluster/kwok-stages.yaml). */
export function failing(obj: KubeObject): KubeObject {
  const spec = obj.spec as { template: { metadata?: { annotations?: Record<string, string> } } };
  return {
    ...obj,
    spec: {
      ...spec,
      template: {
        ...spec.template,
        metadata: {
          ...spec.template.metadata,
          annotations: { ...spec.template.metadata?.annotations, "syncward.dev/kwok-outcome": "fail" },
        },
      },
    },
  };
}

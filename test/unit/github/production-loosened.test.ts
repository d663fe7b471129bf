// Which environments' production guards a config change loosens: the guarded environment's own
// loosenings, and an unguarded one that starts writing where a guarded one deploys.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { configChanges } from "../../../src/config/config-changes.ts";
import { parseConfig } from "../../../src/config/load.ts";
import { productionLoosened } from "../../../src/github/config-check.ts";

const prod = {
  name: "prod",
  source: { path: "prod" },
  destination: { namespace: "shop-prod" },
  production: true,
  approval: { minimum: 1 },
};
const dev = { name: "dev", source: { path: "dev" }, destination: { namespace: "shop-dev" } };
const config = (...environments: object[]) => parseConfig(stringify({ environments }));

describe("productionLoosened", () => {
  const cases: Array<[string, object[], object[], string[]]> = [
    [
      "dev moved into prod's namespace",
      [prod, dev],
      [prod, { ...dev, destination: { namespace: "shop-prod" } }],
      ["dev"],
    ],
    [
      "a new environment in prod's namespace",
      [prod],
      [prod, { ...dev, name: "x", destination: { namespace: "shop-prod" } }],
      ["x"],
    ],
    ["prod's previews turned on", [prod], [{ ...prod, previews: true }], ["prod"]],
    [
      "dev's own namespace widened elsewhere",
      [prod, dev],
      [prod, { ...dev, policy: { namespaces: ["shop-dev", "shop-qa"] } }],
      [],
    ],
  ];
  for (const [name, was, now, loosened] of cases) {
    it(name, () => {
      const before = config(...was);
      const after = config(...now);
      assert.deepEqual(productionLoosened(configChanges(before, after), before, after), loosened);
    });
  }
});

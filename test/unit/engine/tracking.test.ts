import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonical, desiredHash } from "../../../src/engine/tracking.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

// The applied hash is stored on every live object syncward manages: were it spelled differently
// for the same manifest, every object would look changed in Git and be applied again.
describe("the applied hash", () => {
  const cases: Array<{ name: string; value: unknown; canonical: string; hash: string }> = [
    {
      name: "a ConfigMap: keys sorted at every level, escapes and non-ASCII keys",
      value: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "c", labels: { b: "2", a: "1" } },
        data: { "z/x~y": "1", é: "2", B: "3", a: null },
      },
      canonical:
        '{"apiVersion":"v1","data":{"B":"3","a":null,"z/x~y":"1","é":"2"},"kind":"ConfigMap","metadata":{"labels":{"a":"1","b":"2"},"name":"c"}}',
      hash: "3884a2fdb63e85bca4de",
    },
    {
      name: "undefined values left out, undefined items empty, integer-like keys as strings",
      value: { a: [1, undefined, null, "x", [], {}], b: undefined, "": true, "\u0000": 1.5, "10": 1, "9": 2 },
      canonical: '{"":true,"\\u0000":1.5,"10":1,"9":2,"a":[1,,null,"x",[],{}]}',
      hash: "8fbe9e66a05d2032b38a",
    },
    { name: "an empty list", value: [], canonical: "[]", hash: "4f53cda18c2baa0c0354" },
    { name: "a string", value: "s", canonical: '"s"', hash: "0f4657778ae14ff7aeeb" },
    {
      name: "lists of maps in maps",
      value: { nested: { deep: [{ k: [{ z: 1, y: [true, false] }] }] } },
      canonical: '{"nested":{"deep":[{"k":[{"y":[true,false],"z":1}]}]}}',
      hash: "cb10313810054823d9be",
    },
  ];
  for (const c of cases) {
    it(`spells ${c.name} as it always has`, () => {
      assert.equal(canonical(c.value), c.canonical);
      assert.equal(desiredHash(c.value as KubeObject), c.hash);
    });
  }
});

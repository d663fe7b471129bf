import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderDiff } from "../../../src/engine/diff/index.ts";
import { redactSecrets, redactText } from "../../../src/engine/redact.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { type Any, edit, fixture } from "./fixtures.ts";

const PASSWORD = "s3cr3t-Pa55word";
const ROTATED = "rotated-by-hand-42";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

const secretDesired = fixture("secret.desired.yaml");
const secretLive = fixture("secret.live.yaml");
const secretRotated = fixture("secret.live-rotated.yaml");

function secret(data: Record<string, string> | undefined, stringData?: Record<string, string>): KubeObject {
  const obj: KubeObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "n" } };
  if (data) obj.data = data;
  if (stringData) obj.stringData = stringData;
  return obj;
}

describe("redactSecrets", () => {
  it("same content on both sides gets the same mask, stringData vs data included", () => {
    const { desired, live } = redactSecrets(secretDesired, secretLive);
    const d = desired as Any;
    const l = live as Any;
    assert.equal(d.stringData.password, l.data.password);
    assert.equal(d.stringData.username, l.data.username);
    assert.match(d.stringData.password, /^\++$/);
  });

  it("different content gets masks of different lengths", () => {
    const { desired, live } = redactSecrets(secretDesired, secretRotated);
    const d = (desired as Any).stringData.password as string;
    const l = (live as Any).data.password as string;
    assert.match(d, /^\++$/);
    assert.match(l, /^\++$/);
    assert.notEqual(d.length, l.length);
    assert.equal((desired as Any).stringData.username, (live as Any).data.username);
  });

  it("the mask says nothing about the value's length", () => {
    const short = redactSecrets(secret({ k: b64("a") }), undefined).desired as Any;
    const long = redactSecrets(secret({ k: b64("a".repeat(500)) }), undefined).desired as Any;
    assert.equal(short.data.k, long.data.k);
  });

  it("drops last-applied-configuration (it holds the values) and never mutates inputs", () => {
    const before = structuredClone(secretRotated);
    const { live } = redactSecrets(secretDesired, secretRotated);
    assert.equal(live?.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"], undefined);
    assert.deepEqual(secretRotated, before);
    assert.doesNotMatch(JSON.stringify(live), new RegExp(`${ROTATED}|${b64(ROTATED)}`));
  });

  it("keys only one side has are masked too", () => {
    const { desired, live } = redactSecrets(secret({ a: b64("x1") }), secret({ b: b64("y2") }));
    assert.deepEqual((desired as Any).data, { a: "++++++++" });
    assert.deepEqual((live as Any).data, { b: "++++++++" });
  });

  it("non-Secrets (and a Secret-named kind in another group) pass through as deep copies", () => {
    const cm = fixture("configmap.live.yaml");
    const sealed: KubeObject = {
      apiVersion: "bitnami.com/v1alpha1",
      kind: "Secret",
      metadata: { name: "x" },
      data: { k: "v" },
    };
    const r1 = redactSecrets(cm, cm);
    assert.deepEqual(r1.desired, cm);
    assert.notEqual(r1.desired, cm);
    const r2 = redactSecrets(sealed, undefined);
    assert.deepEqual(r2.desired, sealed);
    assert.equal(r2.live, undefined);
  });
});

describe("redactText", () => {
  const cases: Array<[string, string, string[], string]> = [
    ["plain value", `auth failed for ${PASSWORD}.`, [PASSWORD], "auth failed for ********."],
    ["base64 form", `data: {password: ${b64(PASSWORD)}}`, [PASSWORD], "data: {password: ********}"],
    [
      "decoded form of a base64 value",
      `login with ${PASSWORD} now`,
      [b64(PASSWORD)],
      "login with ******** now",
    ],
    [
      "every occurrence, several values",
      `${PASSWORD}/${ROTATED}/${PASSWORD}`,
      [PASSWORD, ROTATED],
      "********/********/********",
    ],
    ["regex characters are literal", "token a.b*c+d? here", ["a.b*c+d?"], "token ******** here"],
    ["empty and tiny values are skipped", "a b c", ["", "a"], "a b c"],
    ["no values", "nothing to hide", [], "nothing to hide"],
  ];
  for (const [name, text, values, expected] of cases) {
    it(name, () => assert.equal(redactText(text, values), expected));
  }

  it("lines of a multi-line value (a PEM key printed line by line)", () => {
    const key = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----";
    const out = redactText("error near MIIEvQIBADANBgkqhkiG9w0BAQEFAASC in file", [key]);
    assert.equal(out, "error near ******** in file");
  });
});

describe("Secrets in renderDiff", () => {
  it("shows which key changed, with masks, and never the value or its base64", () => {
    const diff = renderDiff(secretDesired, secretRotated);
    assert.notEqual(diff, "");
    for (const value of [PASSWORD, ROTATED, "app"]) {
      assert.doesNotMatch(diff, new RegExp(`\\b${value}\\b`));
      assert.ok(!diff.includes(b64(value)), `base64 of ${value} leaked`);
    }
    assert.match(diff, /^- {2}password: \+{12}$/m);
    assert.match(diff, /^\+ {2}password: \+{8}$/m);
    assert.match(diff, /^ {3}username: \+{8}$/m);
  });

  it("a Secret in sync renders nothing", () => {
    assert.equal(renderDiff(secretDesired, secretLive), "");
  });

  it("a key added in Git shows masked", () => {
    const d = edit(secretDesired, (o: Any) => (o.stringData.apiKey = "ak_live_0123456789"));
    const diff = renderDiff(d, secretLive);
    assert.match(diff, /^\+ {2}apiKey: \+{8}$/m);
    assert.ok(!diff.includes("ak_live_0123456789") && !diff.includes(b64("ak_live_0123456789")));
  });
});

// Loads the live-object fixtures in test/fixtures/health (as `kubectl get -o yaml` prints them).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { KubeObject } from "../../../src/kube/object.ts";

export const FIXTURES = join(import.meta.dirname, "../../fixtures/health");

export function loadFixture(name: string): KubeObject {
  const obj: unknown = parse(readFileSync(join(FIXTURES, name), "utf8"));
  if (typeof obj !== "object" || obj === null || !("kind" in obj) || !("metadata" in obj)) {
    throw new Error(`${name} is not a Kubernetes object`);
  }
  return obj as KubeObject;
}

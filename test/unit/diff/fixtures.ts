// Loads the diff fixtures (test/fixtures/diff) as objects; each call returns a fresh copy.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { IgnoreDifference } from "../../../src/config/types.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

export const FIXTURES = join(import.meta.dirname, "../../fixtures/diff");

export function fixture(name: string): KubeObject {
  return parse(readFileSync(join(FIXTURES, name), "utf8")) as KubeObject;
}

export function fixturePath(name: string): string {
  return join(FIXTURES, name);
}

/** An ignoreDifferences rule with the schema's defaults filled in. */
export function rule(partial: Partial<IgnoreDifference> & Pick<IgnoreDifference, "kind">): IgnoreDifference {
  return { group: "", jsonPointers: [], jqPathExpressions: [], managedFieldsManagers: [], ...partial };
}

/** Applies a mutation to a copy. */
export function edit<T>(obj: T, change: (copy: T) => void): T {
  const copy = structuredClone(obj);
  change(copy);
  return copy;
}

// biome-ignore lint/suspicious/noExplicitAny: tests reach into fixture objects freely.
export type Any = any;

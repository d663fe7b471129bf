// Server-side apply's record of who owns what (`metadata.managedFields[].fieldsV1`) turned into
// concrete paths of an object. Keys: `f:<field>`, `k:<json>` (list item by key fields),
// `v:<json>` (set member by value), `i:<n>` (list item by index), `.` (the node itself).
import type { ManagedFieldsEntry } from "../../kube/object.ts";
import { deepEqual } from "./deep-equal.ts";
import { isPlainObject } from "./json-pointer.ts";
import type { Path } from "./types.ts";

export interface OwnedField {
  path: Path;
  /** Nothing is listed below it: the manager owns the whole value (a scalar, or an atomic map or list). */
  leaf: boolean;
  /** A list item or set member (`k:`, `v:`, `i:`): owning it as a node means owning its existence. */
  item: boolean;
}

/**
 * The fields a fieldsV1 set owns, located in `target`; list items that `target` lacks are skipped,
 * and so is every subtree whose path `within` refuses (a caller that looks for some fields only:
 * a CRD's schema holds hundreds of thousands).
 */
export function fieldsV1Paths(
  fieldsV1: unknown,
  target: unknown,
  within: (path: Path) => boolean = () => true,
): OwnedField[] {
  const out: OwnedField[] = [];
  if (isPlainObject(fieldsV1)) walk(fieldsV1, target, [], out, within);
  return out;
}

function walk(
  set: Record<string, unknown>,
  node: unknown,
  prefix: Path,
  out: OwnedField[],
  within: (path: Path) => boolean,
): void {
  for (const key of Object.keys(set)) {
    if (key === ".") continue;
    let step: string | number | undefined;
    let item = false;
    if (key.startsWith("f:")) {
      step = key.slice(2);
    } else if (key.startsWith("k:") || key.startsWith("v:") || key.startsWith("i:")) {
      item = true;
      step = Array.isArray(node) ? findItem(key, node) : undefined;
    }
    if (step === undefined) continue;
    const path = [...prefix, step];
    if (!within(path)) continue;
    const children = set[key];
    const next = Array.isArray(node)
      ? node[step as number]
      : isPlainObject(node) && typeof step === "string"
        ? node[step]
        : undefined;
    if (!isPlainObject(children) || Object.keys(children).length === 0) {
      out.push({ path, leaf: true, item });
      continue;
    }
    if (Object.hasOwn(children, ".")) out.push({ path, leaf: false, item });
    walk(children, next, path, out, within);
  }
}

function findItem(key: string, list: unknown[]): number | undefined {
  const body = key.slice(2);
  if (key.startsWith("i:")) {
    const index = Number(body);
    return Number.isInteger(index) && index >= 0 && index < list.length ? index : undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (key.startsWith("v:")) {
    const index = list.findIndex((member) => deepEqual(member, parsed));
    return index < 0 ? undefined : index;
  }
  if (!isPlainObject(parsed)) return undefined;
  const fields = Object.entries(parsed);
  const index = list.findIndex(
    (member) => isPlainObject(member) && fields.every(([name, value]) => deepEqual(member[name], value)),
  );
  return index < 0 ? undefined : index;
}

/** Entries that carry a fieldsV1 set (all operations: Apply and Update, with or without subresource). */
export function managedEntries(managedFields: unknown): ManagedFieldsEntry[] {
  if (!Array.isArray(managedFields)) return [];
  return managedFields.filter(
    (entry): entry is ManagedFieldsEntry => isPlainObject(entry) && isPlainObject(entry.fieldsV1),
  );
}

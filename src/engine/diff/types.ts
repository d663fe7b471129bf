// The plain values the comparison produces: what every reporter (CLI, check run, history) renders.
import type { IgnoreDifference } from "../../config/types.ts";
import type { ChangeOwner } from "./foreign-fields.ts";
import type { TrustedManager } from "./trusted-managers.ts";

export type DifferenceKind = "changed" | "missing" | "extra" | "added";

export interface Difference {
  /**
   * RFC 6901 JSON pointer, e.g. `/spec/replicas` or `/spec/template/spec/containers/1`. It addresses
   * the live object the caller passed (indices before ignored items were taken out) wherever the
   * field exists there; a list item live lacks ("missing") is addressed by its position in desired,
   * so ask fieldManagersOf() about "changed" and "extra" paths only.
   */
  path: string;
  /**
   * changed: both have it, values differ; missing: desired declares it, live lacks it; extra: a
   * list item only live has; added: a field or item Git does not declare that an untrusted field
   * manager set (read from managedFields).
   */
  kind: DifferenceKind;
  desired?: unknown;
  live?: unknown;
  /**
   * Who set the live value (only when live carries managedFields); syncward itself only where it
   * is not trusted for the field (a security-relevant field the render does not hold as it is).
   */
  owners?: ChangeOwner[];
  /** A trusted manager's name (or syncward's) claims the change but its pairs do not cover it: who, and why. */
  spoofed?: string;
}

export interface Comparison {
  inSync: boolean;
  differences: Difference[];
}

export interface CompareOptions {
  /** The environment's rules; only those matching the object (group, kind, name, namespace) apply. */
  ignoreDifferences?: IgnoreDifference[];
  /** Annotation and label keys (glob patterns allowed: `*`, `?`) left out of the comparison. */
  ignoreMetadataKeys?: string[];
  /**
   * Field managers trusted for some fields, as (manager, paths) pairs or bare names (which get the
   * default paths), beyond Kubernetes' own controllers (see trusted-managers.ts) and the matching
   * rules' managedFieldsManagers.
   */
  trustedManagers?: ReadonlyArray<string | TrustedManager>;
}

/** A concrete location inside a JSON value: map keys are strings, list positions numbers. */
export type Path = ReadonlyArray<string | number>;

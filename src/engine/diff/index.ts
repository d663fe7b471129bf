// The engine's comparison of desired and live objects: the only module other layers import.
export { compareObjects } from "./compare-objects.ts";
export { fieldManagersOf } from "./field-managers-of.ts";
export { IgnoreRuleError } from "./ignore-rule-error.ts";
export { rulesFor } from "./ignore-rules.ts";
export { ignoredValuesFromLive } from "./ignored-values-from-live.ts";
export { compileJqPath } from "./jq-paths.ts";
export { JsonPointerError } from "./json-pointer.ts";
export { diffLines, type LineEdit, unifiedDiff } from "./line-diff.ts";
export { parseQuantity, quantitiesEqual } from "./quantity.ts";
export { type RenderDiffOptions, renderDiff } from "./render-diff.ts";
export type { CompareOptions, Comparison, Difference, DifferenceKind } from "./types.ts";

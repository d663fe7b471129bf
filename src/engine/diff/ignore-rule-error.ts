/** A broken ignoreDifferences rule (bad JSON pointer, jq that does not parse or is not a path). */
export class IgnoreRuleError extends Error {
  override name = "IgnoreRuleError";
}

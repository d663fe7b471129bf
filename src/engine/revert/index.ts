// Undoing out-of-band changes to managed objects, and the trail a responder reads afterwards.
export {
  assertReverted,
  compareOptionsFor,
  RevertError,
  removeForeignAdditions,
  untrustedDrift,
} from "./revert.ts";
export { securityReason } from "./security.ts";
export { maskedValue, type RevertedChange, revertTrail } from "./trail.ts";

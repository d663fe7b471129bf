// Undoing out-of-band changes to managed objects, and the trail a responder reads afterwards.
export {
  assertReverted,
  compareOptionsFor,
  RevertError,
  removeForeignAdditions,
  untrustedDrift,
} from "./revert.ts";

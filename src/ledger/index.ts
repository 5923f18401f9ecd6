export { type CallContext, callEntry } from "./call-entry.js";
export {
  type CallKind,
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  type LedgerGroup,
  type LedgerTotal,
  totalsOf,
} from "./entry.js";
export { MemoryCostLedger } from "./memory.js";
export { PgCostLedger } from "./postgres.js";
export { type CallPrice, type ModelPrice, priceCall } from "./price.js";
export { SqliteCostLedger } from "./sqlite.js";
export { type ReportedUsage, readUsage, type UsageShape } from "./usage.js";

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
export { forgetLedgerKeys } from "./forget.js";
export { MemoryCostLedger } from "./memory.js";
export { mergeTotals } from "./merge.js";
export { forSession, type LedgerSlot, meteredModel } from "./metered-model.js";
export { COST_LEDGER_FILE, openCostLedger } from "./open.js";
export { PgCostLedger } from "./postgres.js";
export { type CallPrice, type ModelPrice, priceCall } from "./price.js";
export { recordCall } from "./record.js";
export { type CostReport, costQueryFrom, costReport, formatUsd, LEDGER_GROUPS } from "./report.js";
export { RunMeter } from "./run-meter.js";
export { SqliteCostLedger } from "./sqlite.js";
export { type ReportedUsage, readUsage, type UsageShape } from "./usage.js";

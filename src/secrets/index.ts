export { isCredentialKey } from "./credential-keys.js";
export { redactEntryInput, redactEnvelope, redactJson } from "./entries.js";
export { presetScannerCount, ungatedPresetRules } from "./preset.js";
export { redactSecrets } from "./redact.js";
export { entropyBits, REDACTED } from "./shapes.js";

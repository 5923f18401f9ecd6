export { isCredentialKey } from "./credential-keys.js";
export { redactEntryInput, redactEnvelope, redactJson } from "./entries.js";
export { PRESET_SCANNERS, UNGATED_PRESET_RULES } from "./preset.js";
export { redactSecrets } from "./redact.js";
export { entropyBits, REDACTED } from "./shapes.js";

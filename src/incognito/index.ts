export { incognitoRefusal } from "./errors.js";
export { DEFAULT_INCOGNITO_LIMITS, IncognitoKeys, type IncognitoLimits } from "./keys.js";
export { type IncognitoMatcher, type IncognitoRule, incognitoMatcher } from "./rules.js";
export { routeIncognito, storedSessionsOf } from "./store.js";
export { withIncognito } from "./wire.js";

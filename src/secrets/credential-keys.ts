// Exact key names (after normalising) that hold credentials but have no telling suffix.
const CREDENTIAL_KEYS = new Set(["auth", "pass", "pwd", "pin", "cvv", "ssn", "sessionid", "otp", "sig"]);
// Suffixes of normalised key names: `db_password`, `refreshToken`, `x-api-key`, `client_secret`…
const CREDENTIAL_SUFFIXES = [
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "apikey",
  "privatekey",
  "privatekeyid",
  "secretkey",
  "accesskey",
  "accountkey",
  "sharedaccesskey",
  "sharedaccesssignature",
  "connectionstring",
  "authorization",
  "cookie",
  "credential",
  "credentials",
  "signature",
];

/**
 * Whether a key names a credential, at any nesting level: case, `-`, `_`, `.` and spaces are ignored, so
 * `api_key`, `apiKey`, `API-KEY` and `x-api-key` all match. Errs on the side of dropping.
 */
export function isCredentialKey(key: string): boolean {
  const normalised = key.toLowerCase().replace(/[-_.\s]/g, "");
  if (CREDENTIAL_KEYS.has(normalised)) return true;
  return CREDENTIAL_SUFFIXES.some((suffix) => normalised.endsWith(suffix));
}

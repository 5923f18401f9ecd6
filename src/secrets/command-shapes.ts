import { REDACTED } from "./redacted.js";
import type { Shape } from "./shapes.js";

const keep = (_m: string, prefix = "", value = ""): string => {
  const quote = value.startsWith('"') || value.startsWith("'") ? (value[0] ?? "") : "";
  return `${prefix}${quote}${REDACTED}${quote}`;
};

/**
 * Secrets given on a command line or in a file that says what they are by its layout rather than by a
 * `name=value`: `curl -u user:pw`, `mysql -ppw`, `sshpass -p pw`, `docker login -p pw`, `--password pw`,
 * `.netrc`'s `login bob password pw`, NuGet's `<add key="ClearTextPassword" value="pw"/>`, docker's
 * `config.json` `"auth": "<base64 user:pw>"`. Each runs only on text holding its telling word, and each scans
 * a bounded span, so none is quadratic.
 */
export const COMMAND_SHAPES: readonly Shape[] = [
  {
    pattern: /(\bcurl\b[^\n]{0,300}?\s(?:-u|--user)(?:\s+|=)["']?[^\s:"']*:)(?!\[redacted\])([^\s"']+)/g,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
    needs: { words: ["curl"] },
    telltales: ["-"],
  },
  {
    pattern: /(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s-p)(?!\[redacted\])([^\s-]\S*)/g,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
    needs: { words: ["mysql", "mariadb"] },
    telltales: ["-"],
  },
  {
    pattern:
      /(\b(?:sshpass|(?:docker|podman|nerdctl|buildah|helm|oras)\s+(?:registry\s+)?login)\b[^\n]{0,200}?\s(?:-p|--password)\s+)(?!\[redacted\])("[^"\n]*"|'[^'\n]*'|\S+)/g,
    replace: keep,
    needs: { words: ["sshpass", "login"] },
    telltales: ["-"],
  },
  {
    pattern:
      /((?:^|\s)--(?:password|passwd|pass|pwd|token|secret|api-key|apikey|auth-token|access-token)\s+)(?!-)(?!\[redacted\])("[^"\n]*"|'[^'\n]*'|\S+)/gi,
    replace: keep,
    needs: { words: ["--"] },
    telltales: ["--"],
  },
  {
    pattern: /(\blogin\s+\S+\s+password\s+)(?!\[redacted\])(\S+)/g,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
    needs: { words: ["login"] },
    telltales: ["login"],
  },
  {
    pattern:
      /(<add\s+key=["'][^"']*(?:password|secret|token|apikey)[^"']*["']\s+value=["'])(?!\[redacted\])[^"']*/gi,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}`,
    needs: { words: ["value="] },
    telltales: ["="],
  },
  {
    pattern: /("auth"\s*:\s*")(?!\[redacted\])[A-Za-z0-9+/]{12,}={0,2}"/g,
    replace: (_m, prefix = "") => `${prefix}${REDACTED}"`,
    needs: { words: ['"auth"'] },
    telltales: [":"],
  },
];

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createGatewayLogger } from "../../src/gateway/logger.js";
import { SECRET_CORPUS, telltales } from "../support/secret-corpus.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the gateway's log", () => {
  it("scrubs secrets from the message, every field at any depth, and errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-log-"));
    dirs.push(dir);
    const file = join(dir, "log");
    const logger = createGatewayLogger({ destination: pino.destination({ dest: file, sync: true }) });
    for (const s of SECRET_CORPUS) {
      logger.error(
        { path: `/x/${s.text}`, err: new Error(`upstream said ${s.text}`), deep: { list: [s.text] } },
        `failed: ${s.text}`,
      );
    }
    logger.flush();
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(SECRET_CORPUS.length);
    const first = JSON.parse(lines[0] ?? "{}") as { msg: string; err: { message: string } };
    expect(first.msg).toBe("failed: please use [redacted] for the deploy");
    expect(first.err.message).toBe("upstream said please use [redacted] for the deploy");
    const log = lines.join("\n");
    for (const s of SECRET_CORPUS) for (const piece of telltales(s.secret)) expect(log).not.toContain(piece);
  });
});

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { within } from "../gateway/postgres/gateways.js";
import { type GuideServe, guideEnv, readGuide, serveLine, sessiondOnPath, shell } from "./guide-steps.js";

const guide = readGuide("docs/guides/shared-token.md");
const [firstStart, copy, secondStart, check] = guide.sh;
const [generatedLine, storedLine, doctorOk, doctorFail] = guide.text;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SRV = "/srv/sessiond";

describe("docs/guides/shared-token.md, followed literally", () => {
  it("the copied token file keeps mode 0600 and a client with the first machine's token is accepted by both", async () => {
    const root = mkdtempSync(join(tmpdir(), "sessiond-guide-token-"));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    // Two machines: /srv/sessiond is <root>/first/srv/sessiond on one and <root>/second/… on the other.
    const first = join(root, "first", SRV);
    const second = join(root, "second", SRV);
    mkdirSync(first, { recursive: true });
    const bin = sessiondOnPath();
    cleanups.push(() => bin.remove());
    const env = guideEnv({ PATH: bin.path });
    const serve = async (line: string, dir: string) => {
      const gateway: GuideServe = await within(60_000, line, serveLine(line, { cwd: dir, env }));
      cleanups.push(() => gateway.kill());
      await within(30_000, "the token line", gateway.printed(/^access token: /));
      return gateway;
    };
    const onFirst = (text: string) => text.replaceAll(SRV, first);
    const onSecond = (text: string) => text.replaceAll(SRV, second);

    expect(firstStart).toEqual(["sessiond serve"]);
    const a = await serve(firstStart![0]!, first);
    expect(a.output.text.split("\n")).toContain(onFirst(generatedLine!));
    const tokenFile = join(first, ".sessiond", "gateway-token");
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

    // Step 2: ssh runs its command on the second machine; scp -p copies from the first to the second.
    expect(copy).toHaveLength(2);
    const [ssh, scp] = copy as [string, string];
    expect(ssh).toMatch(/^ssh second\.example\.org /);
    await shell(onSecond(ssh.replace(/^ssh second\.example\.org /, "")), { cwd: root, env });
    const copied = /^scp -p (\S+) second\.example\.org:(\S+)$/.exec(scp);
    expect(copied).not.toBeNull();
    await shell(`cp -p ${onFirst(copied![1]!)} ${onSecond(copied![2]!)}`, { cwd: root, env });

    expect(secondStart).toEqual(["sessiond serve"]);
    const b = await serve(secondStart![0]!, second);
    expect(b.output.text.split("\n")).toContain(onSecond(storedLine!));
    const copyFile = join(second, ".sessiond", "gateway-token");
    expect(statSync(copyFile).mode & 0o777).toBe(0o600);

    // Step 4 on each machine: doctor's token line, and the curl with the token of that machine's file.
    expect(check).toHaveLength(2);
    const [doctor, curl] = check as [string, string];
    for (const [dir, gateway, local] of [
      [first, a, onFirst],
      [second, b, onSecond],
    ] as const) {
      const report = await shell(doctor, { cwd: dir, env });
      expect(report.split("\n")).toContain(local(doctorOk!));
      const listed = await shell(curl.replace("http://127.0.0.1:7420", gateway.url), { cwd: dir, env });
      expect(JSON.parse(listed)).toEqual({ sessions: [] });
    }
    // A client elsewhere holds the first machine's token: both accept it, and refuse another.
    const token = readFileSync(tokenFile, "utf8").trim();
    for (const gateway of [a, b]) {
      const status = async (bearer: string) =>
        (await fetch(`${gateway.url}/api/sessions`, { headers: { authorization: `Bearer ${bearer}` } }))
          .status;
      expect(await status(token)).toBe(200);
      expect(await status(`${token}x`)).toBe(401);
    }

    // A copy others can read: doctor's FAIL line as quoted, exit 1; the chmod it names fixes it.
    chmodSync(copyFile, 0o644);
    const failed = await shell(`${doctor}; echo "exit $?"`, { cwd: second, env });
    expect(failed.split("\n")).toContain(onSecond(doctorFail!));
    expect(failed.trim().split("\n").at(-1)).toBe("exit 1");
    await shell(/chmod 600 \S+$/.exec(onSecond(doctorFail!))![0], { cwd: second, env });
    expect((await shell(doctor, { cwd: second, env })).split("\n")).toContain(onSecond(doctorOk!));
  }, 180_000);
});

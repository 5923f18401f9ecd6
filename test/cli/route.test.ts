import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Route } from "../../src/index.js";
import { cli, parseJson, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond route", () => {
  it("routes a channel message with the default scope and opens no store", async () => {
    const dir = tempDir();
    const telegram = await cli(dir, [
      "route",
      "--channel",
      "telegram",
      "--sender",
      "42",
      "--chat-id",
      "-100",
    ]);
    expect(telegram).toMatchObject({ code: 0, stdout: "telegram:-100\n", stderr: "" });
    const discord = await cli(dir, ["route", "--channel", "discord", "--sender", "7"]);
    expect(discord.stdout).toBe("discord:dm:7\n");
    const group = await cli(dir, [
      "route",
      ...["--channel", "slack", "--chat-type", "group", "--chat-id", "C1", "--sender", "u"],
      ...["--thread", "t9"],
    ]);
    expect(group.stdout).toBe("slack:C1:thread:t9\n");
    expect(existsSync(join(dir, ".sessiond"))).toBe(false);
  });

  it("prints the whole route with --json", async () => {
    const result = await cli(tempDir(), ["route", "--channel", "discord", "--sender", "7", "--json"]);
    expect(result.code).toBe(0);
    expect(parseJson<Route>(result.stdout)).toEqual({
      key: "discord:dm:7",
      agent: "main",
      channel: "discord",
      chatType: "direct",
      createdBy: "7",
    });
  });

  it("routes entry points by their own rules", async () => {
    const dir = tempDir();
    const cases: [string[], string][] = [
      [["--entry-point", "openai_compat", "--client-ip", "10.0.0.5"], "openai-compat:10.0.0.5"],
      [
        ["--entry-point", "websocket", "--web", "--connection-id", "c42", "--sender", "admin"],
        "admin-conn-c42",
      ],
      [["--entry-point", "app_api", "--user", "a b", "--session-id", "s/1"], "app_api:a%20b/s%2F1"],
      [["--entry-point", "web_chat", "--sender", "admin"], "admin-session"],
      [
        ["--entry-point", "webhook", "--channel", "api", "--sender", "bob", "--subject-ref", "mr-7"],
        "p2p:bob:main:for:mr-7",
      ],
      [
        ["--entry-point", "chat_webhook", "--type", "alert", "--at", "1700000000000", "--sender", "pd"],
        "webhook:main:alert:ts-1700000000000",
      ],
      [
        [
          "--entry-point",
          "subagent",
          "--parent-agent",
          "main",
          "--at",
          "1970-01-01T00:00:01Z",
          "--sender",
          "s",
        ],
        "agent:main:subagent:job-1000",
      ],
    ];
    for (const [args, key] of cases) {
      const result = await cli(dir, ["route", ...args]);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({
        args,
        code: 0,
        stdout: `${key}\n`,
      });
    }
  });

  it("suggests --chat-id for --chat", async () => {
    const dir = tempDir();
    const slip = await cli(dir, ["route", "--channel", "telegram", "--sender", "1", "--chat", "5"]);
    expect(slip).toMatchObject({
      code: 2,
      stderr: "error: unknown option '--chat' (did you mean --chat-id?)\n",
    });
  });

  it("rejects flags that are missing or belong to another entry point as usage errors", async () => {
    const dir = tempDir();
    const missing = await cli(dir, ["route", "--entry-point", "openai_compat"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--client-ip");
    const stray = await cli(dir, ["route", "--channel", "x", "--sender", "y", "--client-ip", "1.2.3.4"]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/--client-ip only applies with --entry-point openai_compat/);
    const noSender = await cli(dir, ["route", "--entry-point", "webhook", "--channel", "api"]);
    expect(noSender.code).toBe(2);
    expect(noSender.stderr).toMatch(/^error \[INVALID_ARGUMENT\]: .*--sender/);
    const badType = await cli(dir, ["route", "--channel", "x", "--sender", "y", "--chat-type", "dm"]);
    expect(badType.code).toBe(2);
  });

  it("uses identity links, agents and scopes from the config file", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      [
        "agents: [{ id: main }, { id: ops }]",
        "default_agent: main",
        "session:",
        "  identity_links:",
        '    alice: ["telegram:123", "discord:dm:987"]',
      ].join("\n"),
    );
    const linked = await cli(dir, ["route", "--channel", "discord", "--sender", "987"]);
    expect(linked).toMatchObject({ code: 0, stdout: "main:telegram:123\n" });
    const other = await cli(dir, ["route", "--channel", "discord", "--sender", "988", "--agent", "ops"]);
    expect(other.stdout).toBe("ops:discord:dm:988\n");
    const unknownAgent = await cli(dir, [
      "route",
      "--channel",
      "discord",
      "--sender",
      "1",
      "--agent",
      "nope",
    ]);
    expect(unknownAgent.code).toBe(2);
    expect(unknownAgent.stderr).toContain('agent "nope" is not a configured agent');

    writeFileSync(join(dir, "other.yaml"), "session:\n  dm_scope: per-peer\n");
    const explicit = await cli(dir, [
      "--config",
      "other.yaml",
      "route",
      "--channel",
      "discord",
      "--sender",
      "987",
    ]);
    expect(explicit.stdout).toBe("direct:987\n");
  });

  it("reports a routing config the engine rejects as CONFIG_INVALID (exit 1)", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), "agents: [{ id: a }]\ndefault_agent: b\n");
    const result = await cli(dir, ["route", "--channel", "x", "--sender", "y"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[CONFIG_INVALID\]: .*sessiond\.yaml: defaultAgent "b"/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { queryDb, within } from "../gateway/postgres/gateways.js";
import { type ChatHandler, type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { exported, type GuideServe, guideEnv, readGuide, serveLine, shell } from "./guide-steps.js";

const guide = readGuide("docs/guides/postgresql-two-gateways.md");
const [createBlock, tokenBlock, serveBlock, chatBlock, raceBlock] = guide.sh;

let cluster: PostgresCluster;
let model: OpenAiServer;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  cluster = await startPostgres();
  model = await startOpenAiServer();
}, 120_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await model?.close();
  await cluster?.remove();
});

const lastUser = (body: Parameters<ChatHandler>[0]) => {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : "";
};
const sees = (body: Parameters<ChatHandler>[0], text: string) =>
  body.messages.some((m) => typeof m.content === "string" && m.content.includes(text));

/** A gate a model request waits at until `open()`; `reached` resolves once one is waiting. */
function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const arrived = new Promise<void>((r) => {
    reached = r;
  });
  return { open, reached, opened, arrived };
}

/**
 * The model answers `reply to: <input>`, counting each input's runs; an input `hold` waits at the gate until
 * the test opens it (opened after the test in any case). The input is the last line of the last user message:
 * the model gets an interrupted message and the next one together.
 */
function holdingModel() {
  const held = gate();
  const runs = new Map<string, number>();
  model.setHandler(async (body) => {
    const input = lastUser(body).split("\n").at(-1)!;
    runs.set(input, (runs.get(input) ?? 0) + 1);
    if (input === "hold") {
      held.reached();
      await held.opened;
    }
    return { content: `reply to: ${input}` };
  });
  cleanups.push(() => held.open());
  return { held, runs };
}

/**
 * Steps 1 to 4 as written, in a directory of their own on a database of its own name: the database
 * created with the guide's `createdb`, the config its yaml block (the model address made the local
 * server's), the token its `export` line, both gateways its `serve` lines.
 */
async function followSetup(database: string) {
  expect(createBlock).toEqual([`createdb sessiond`, `npm install pg`]);
  const dir = mkdtempSync(join(tmpdir(), "sessiond-guide-pg-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  // libpq's variables point `createdb` and the config's `postgresql:///…` at the test's server.
  // The throwaway cluster's URL has an empty host (its socket directory is in `?host=`).
  const server = new URL(cluster.url.replace("@/", "@localhost/"));
  const pgEnv = {
    PGHOST: server.searchParams.get("host") ?? server.hostname,
    PGUSER: decodeURIComponent(server.username),
    ...(server.port ? { PGPORT: server.port } : {}),
    ...(server.password ? { PGPASSWORD: decodeURIComponent(server.password) } : {}),
  };
  let env = guideEnv(pgEnv);
  await shell(createBlock![0]!.replace("sessiond", database), { cwd: dir, env });
  // `npm install pg`: the package is this repository's, installed already.
  expect(createRequire(import.meta.url).resolve("pg")).toContain("node_modules");
  const yaml = guide.yaml[0]!;
  expect(yaml).toContain(`url: "postgresql:///sessiond"`);
  expect(yaml).toContain(`base_url: "http://127.0.0.1:11434/v1"`);
  writeFileSync(
    join(dir, "sessiond.yaml"),
    yaml
      .replace("postgresql:///sessiond", `postgresql:///${database}`)
      .replace("http://127.0.0.1:11434/v1", model.baseUrl),
  );
  expect(tokenBlock).toHaveLength(1);
  const token = await exported(tokenBlock![0]!, { cwd: dir, env });
  expect(token).toMatch(/^[0-9a-f]{64}$/);
  env = guideEnv({ ...pgEnv, SESSIOND_TOKEN: token });
  expect(serveBlock).toEqual(["sessiond serve --port 7420", "sessiond serve --port 7421"]);
  const gateways: GuideServe[] = [];
  for (const line of serveBlock!) {
    const gateway = await within(120_000, line, serveLine(line, { cwd: dir, env }));
    cleanups.push(() => gateway.kill());
    gateways.push(gateway);
  }
  const [a, b] = gateways as [GuideServe, GuideServe];
  // What each prints is what step 4 quotes, with its own port and directory.
  for (const gateway of gateways) {
    const quoted = guide.text[0]!.replace("http://127.0.0.1:7420", gateway.url).replace(
      "/srv/sessiond/.sessiond",
      join(dir, ".sessiond"),
    );
    await within(30_000, "the store line", gateway.printed(/^store: /));
    for (const line of quoted.split("\n")) expect(gateway.output.text.split("\n")).toContain(line);
  }
  /** A guide's curl line aimed at the test's gateways. */
  const curl = (line: string) =>
    line.replace("http://127.0.0.1:7420", a.url).replace("http://127.0.0.1:7421", b.url).replace(/ &$/, "");
  const databaseUrl = cluster.url.replace(/\/postgres(\?|$)/, `/${database}$1`);
  return { dir, env, token, a, b, curl, databaseUrl };
}

describe("docs/guides/postgresql-two-gateways.md, followed literally", () => {
  it("steps 1-6: both gateways share the session, and a session runs one turn at a time across both", async () => {
    const held = gate();
    let running = 0;
    let mostAtOnce = 0;
    model.setHandler(async (body) => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      try {
        const input = lastUser(body);
        if (input.includes("count to three")) {
          held.reached();
          await held.opened;
        }
        return { content: `reply to: ${input}` };
      } finally {
        running -= 1;
      }
    });
    const { env, dir, curl, databaseUrl } = await followSetup("guide_shared");
    expect(chatBlock).toHaveLength(4);
    const outputs: string[] = [];
    for (const line of chatBlock!) outputs.push(await shell(curl(line), { cwd: dir, env }));
    const [first, second, listA, listB] = outputs;
    expect(JSON.parse(first!)).toMatchObject({ key: "admin-ada", reply: "reply to: my name is Ada" });
    expect(JSON.parse(second!)).toMatchObject({ key: "admin-ada", reply: "reply to: what is my name?" });
    // The second turn, on the other gateway, had the first in its history.
    const requests = model.chatRequests();
    expect(sees(requests.at(-1)!, "my name is Ada")).toBe(true);
    expect(sees(requests.at(-1)!, "reply to: my name is Ada")).toBe(true);
    const [sessionsA, sessionsB] = [listA, listB].map(
      (listed) => (JSON.parse(listed!) as { sessions: Array<Record<string, unknown>> }).sessions,
    );
    expect(sessionsA!.map((s) => s.key)).toEqual(["admin-ada"]);
    expect(sessionsB).toEqual(sessionsA);

    // Step 6: the first line runs in the background (its `&`); its turn is held at the model until the
    // second one is admitted on the other gateway, so without the lease both would be at the model at once.
    expect(raceBlock).toHaveLength(2);
    expect(raceBlock![0]).toMatch(/ &$/);
    const background = shell(curl(raceBlock![0]!), { cwd: dir, env });
    await within(60_000, "the first turn at the model", held.arrived);
    const foreground = shell(curl(raceBlock![1]!), { cwd: dir, env });
    await within(
      60_000,
      "the second message admitted",
      (async () => {
        for (;;) {
          const rows = await queryDb(
            databaseUrl,
            "SELECT 1 FROM inbox WHERE envelope->>'text' = 'now to five'",
          );
          if (rows.length > 0) return;
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
    );
    held.open();
    const [counted, fived] = await Promise.all([background, foreground]);
    expect(JSON.parse(counted)).toMatchObject({ reply: "reply to: count to three" });
    expect(JSON.parse(fived)).toMatchObject({ reply: "reply to: now to five" });
    expect(mostAtOnce).toBe(1);
    expect(sees(model.chatRequests().at(-1)!, "reply to: count to three")).toBe(true);
  }, 300_000);
});

/** POST /api/chat?async=1 on `gateway`: resolves once the input is admitted (in the shared inbox). */
async function admit(gateway: GuideServe, token: string, session: string, message: string): Promise<string> {
  const response = await fetch(`${gateway.url}/api/chat?async=1`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ message, session_id: session }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

/** POST /api/chat on `gateway`, waiting for the reply: its body. */
async function chat(gateway: GuideServe, token: string, session: string, message: string) {
  const response = await fetch(`${gateway.url}/api/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ message, session_id: session }),
  });
  return (await response.json()) as Record<string, unknown>;
}

async function history(gateway: GuideServe, token: string, session: string) {
  const response = await fetch(`${gateway.url}/api/sessions/${session}/history`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await response.json()) as { entries: Array<Record<string, unknown>> }).entries;
}

describe("step 7 of docs/guides/postgresql-two-gateways.md", () => {
  it("kill -9 one gateway: the other answers throughout, takes its inputs over as quoted, and runs each queued one once", async () => {
    const { held, runs } = holdingModel();
    const { a, b, token } = await followSetup("guide_killed");
    // a runs one turn (held at the model) and has three more inputs queued behind it on the same session.
    await admit(a, token, "admin-bob", "hold");
    await within(60_000, "the held turn at the model", held.arrived);
    for (const text of ["q-1", "q-2", "q-3"]) await admit(a, token, "admin-bob", text);
    await a.kill("SIGKILL");
    // b answers at once, before anything is taken over.
    expect(await chat(b, token, "admin-carol", "still there?")).toMatchObject({
      reply: "reply to: still there?",
    });
    const line = await within(120_000, "the take-over line", b.printed(/^took over inputs/));
    expect(line).toBe(guide.text[1]);
    await expect
      .poll(async () => (await history(b, token, "admin-bob")).filter((e) => e.role === "assistant").length, {
        timeout: 60_000,
        interval: 200,
      })
      .toBe(3);
    const entries = await history(b, token, "admin-bob");
    expect(entries.filter((e) => e.role === "assistant").map((e) => e.content)).toEqual([
      "reply to: q-1",
      "reply to: q-2",
      "reply to: q-3",
    ]);
    expect(entries.filter((e) => e.type === "note").map((e) => e.code)).toEqual(["TURN_INTERRUPTED"]);
    expect(entries.filter((e) => e.role === "user").map((e) => e.content)).toEqual([
      "hold",
      "q-1",
      "q-2",
      "q-3",
    ]);
    expect(Object.fromEntries(runs)).toEqual({ hold: 1, "q-1": 1, "q-2": 1, "q-3": 1, "still there?": 1 });
  }, 300_000);

  it("Ctrl-C (SIGTERM) on one gateway: it answers what it had accepted, then exits; the other answers meanwhile", async () => {
    const { held, runs } = holdingModel();
    const { a, b, token } = await followSetup("guide_stopped");
    await admit(a, token, "admin-dan", "hold");
    await within(60_000, "the held turn at the model", held.arrived);
    for (const text of ["q-1", "q-2"]) await admit(a, token, "admin-dan", text);
    const exited = a.kill("SIGTERM");
    await within(30_000, "a to start shutting down", a.printed(/^SIGTERM: shutting down$/));
    expect(await chat(b, token, "admin-erin", "still there?")).toMatchObject({
      reply: "reply to: still there?",
    });
    held.open();
    await within(60_000, "a to exit", exited);
    const entries = await history(b, token, "admin-dan");
    expect(entries.filter((e) => e.role === "assistant").map((e) => e.content)).toEqual([
      "reply to: hold",
      "reply to: q-1",
      "reply to: q-2",
    ]);
    expect(b.output.text).not.toMatch(/took over inputs/);
    expect(Object.fromEntries(runs)).toEqual({ hold: 1, "q-1": 1, "q-2": 1, "still there?": 1 });
  }, 300_000);

  it("Ctrl-C on a gateway whose turn outlasts --grace: it exits after it, and what it had not answered is cancelled", async () => {
    const { held } = holdingModel();
    const { a, b, token } = await followSetup("guide_grace");
    const ids = [await admit(a, token, "admin-fay", "hold")];
    await within(60_000, "the held turn at the model", held.arrived);
    ids.push(await admit(a, token, "admin-fay", "q-1"));
    // The model never answers: the default grace period (10 s) ends the turn, and a exits.
    await within(60_000, "a to exit after its grace period", a.kill("SIGTERM"));
    for (const id of ids) {
      const turn = await fetch(`${b.url}/api/turns/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(await turn.json()).toMatchObject({ id, state: "cancelled" });
    }
    const entries = await history(b, token, "admin-fay");
    expect(entries.filter((e) => e.type === "note").map((e) => e.code)).toEqual(["TURN_CANCELLED"]);
    expect(entries.filter((e) => e.role === "assistant")).toEqual([]);
  }, 300_000);
});

import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export type TrialStore = "sqlite" | "jsonl" | "postgres";

/** Where the trials keep their data: a data dir, and for PostgreSQL its database. */
export interface TrialData {
  dir: string;
  store: TrialStore;
  /** PostgreSQL only. */
  databaseUrl?: string;
}

/** The store the gateway of `data` writes, as `openStore` takes it. */
export function storeConfigOf(data: TrialData) {
  switch (data.store) {
    case "sqlite":
      return { backend: "sqlite", path: join(data.dir, "sessiond.db") } as const;
    case "jsonl":
      return { backend: "jsonl", path: join(data.dir, "sessions") } as const;
    case "postgres":
      if (!data.databaseUrl) throw new Error("a PostgreSQL trial needs its database URL");
      return { backend: "postgres", url: data.databaseUrl } as const;
  }
}

/**
 * A sessiond.yaml in the data dir: one agent answered by the model at `modelUrl`, on the trial's store
 * (PostgreSQL: with `leaseTtlMs` as its lease and heartbeat time).
 */
export function writeTrialConfig(data: TrialData, modelUrl: string, leaseTtlMs?: number): void {
  const store = storeConfigOf(data);
  const lease = leaseTtlMs === undefined ? "" : `, lease_ttl_ms: ${leaseTtlMs}`;
  const storeLine =
    store.backend === "postgres"
      ? `store: { backend: postgres, url: ${JSON.stringify(store.url)}${lease} }`
      : `store: { backend: ${store.backend}, path: ${JSON.stringify(store.path)} }`;
  writeFileSync(
    join(data.dir, "sessiond.yaml"),
    [
      `data_dir: ${JSON.stringify(data.dir)}`,
      storeLine,
      `models: { local: { provider: openai, base_url: "${modelUrl}", model: test-model } }`,
      "agents: [{ id: main, model: local, queue: { debounce_ms: 0 } }]",
      "titles: { enabled: false }",
      "compaction: { enabled: false }",
      "session: { max_queued_turns: 64 }",
      "",
    ].join("\n"),
  );
}

export interface TrialGateway {
  url: string;
  child: ChildProcess;
  /** What it printed so far. */
  output(): string;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop), resolved once it exited. */
  stop(): Promise<void>;
}

/** `sessiond serve` (the bundle at `cli`) on the trial's data dir, once it listens. */
export async function startTrialGateway(cli: string, data: TrialData, token: string): Promise<TrialGateway> {
  const child = spawn(
    process.execPath,
    [cli, "serve", "--port", "0", "--config", join(data.dir, "sessiond.yaml")],
    {
      cwd: data.dir,
      env: { ...process.env, SESSIOND_TOKEN: token, SESSIOND_DATA_DIR: data.dir, SESSIOND_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let text = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match) resolve(match[1] as string);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("error", reject);
    void exited.then(() => reject(new Error(`sessiond serve exited before it listened:\n${text}`)));
  });
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { url, child, output: () => text, kill: () => signal("SIGKILL"), stop: () => signal("SIGTERM") };
}

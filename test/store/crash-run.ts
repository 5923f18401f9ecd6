import { spawn } from "node:child_process";

export interface Ack {
  key: string;
  seq: number;
  id: string;
}

/** Starts crash-child.ts, collects its acknowledgements and kills it with SIGKILL after `count` of them. */
export function runAndKill(config: unknown, count: number): Promise<Ack[]> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./crash-child.ts", import.meta.url).pathname, JSON.stringify(config)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const acks: Ack[] = [];
  let buffer = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const [key, seq, id] = line.split(" ");
        acks.push({ key: key!, seq: Number(seq), id: id! });
      }
      if (acks.length >= count && child.exitCode === null && !child.killed) child.kill("SIGKILL");
    });
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(acks);
      else reject(new Error(`crash child exited by itself (code ${code}): ${stderr}`));
    });
  });
}

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The README and every page under docs/: the places a user copies code from. */
function documents(): string[] {
  const found = [join(ROOT, "README.md")];
  const walk = (dir: string) => {
    for (const dirent of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, dirent.name);
      if (dirent.isDirectory()) walk(path);
      else if (dirent.name.endsWith(".md")) found.push(path);
    }
  };
  if (existsSync(join(ROOT, "docs"))) walk(join(ROOT, "docs"));
  return found;
}

interface Block {
  file: string;
  line: number;
  code: string;
}

/** Every ```ts block (```ts no-check marks a fragment that is not meant to compile alone). */
function tsBlocks(file: string): Block[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(ts|typescript)(\s.*)?$/.exec(lines[i] ?? "");
    if (!fence || fence[2]?.includes("no-check")) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

describe("the code in the README and docs", () => {
  const blocks = documents().flatMap(tsBlocks);

  it("has examples to check", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  it("compiles under strict, as a user's module importing sessiond would", () => {
    const dir = mkdtempSync(join(ROOT, ".readme-examples-"));
    try {
      const files = blocks.map((block, i) => {
        const path = join(dir, `block-${i}.ts`);
        // Each block is a module of its own (top-level await, its own imports).
        writeFileSync(path, `${block.code}\nexport {};\n`);
        return { path, block };
      });
      const program = ts.createProgram(
        files.map((f) => f.path),
        {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.NodeNext,
          moduleResolution: ts.ModuleResolutionKind.NodeNext,
          types: ["node"],
          skipLibCheck: true,
          noEmit: true,
          paths: {
            sessiond: [join(ROOT, "src/index.ts")],
            "sessiond/*": [join(ROOT, "src/public/*.ts")],
          },
        },
      );
      const problems = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file && files.some((f) => f.path === d.file?.fileName))
        .map((d) => {
          const at = files.find((f) => f.path === d.file?.fileName)!;
          const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
          const where = `${relative(ROOT, at.block.file)}:${at.block.line + 1 + line}`;
          return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
        });
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

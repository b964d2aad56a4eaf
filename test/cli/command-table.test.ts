import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { topLevelCommands } from "../../src/cli/command-table.ts";

describe("the command table the CLI loads lazily from", () => {
  it("names exactly the top-level commands its modules register, so help and dispatch cannot drift from them", async () => {
    const registered = new Set<string>();
    for (const load of new Set(topLevelCommands.map((c) => c.load))) {
      const program = new Command("clearline");
      (await load())(program);
      for (const command of program.commands) registered.add(command.name());
    }
    expect([...registered].sort()).toEqual(topLevelCommands.map((c) => c.name).sort());
  });
});

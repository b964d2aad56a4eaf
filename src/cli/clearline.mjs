#!/usr/bin/env node
// The `clearline` command. Runs the TypeScript sources directly through tsx, so the command
// can never run a build older than the code beside it.
import { register } from "tsx/esm/api";

register();
await import("./main.ts");

import { writeFileSync } from "node:fs";
import { renderDataElements } from "./data-elements-source.ts";
import { shippedDictionaries } from "./dictionaries.ts";

// `npm run gen:iso8583`: regenerate data-elements.ts from the shipped field dictionaries.
const source = renderDataElements([...shippedDictionaries.values()]);
writeFileSync(new URL("./data-elements.ts", import.meta.url), source);

import { writeFileSync } from "node:fs";
import { renderCatalogMarkdown } from "./catalog-doc.ts";

// `npm run docs:errors`: regenerate docs/errors.md from the catalog.
writeFileSync(new URL("../../docs/errors.md", import.meta.url), renderCatalogMarkdown());

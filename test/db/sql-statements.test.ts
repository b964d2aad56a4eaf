import { describe, expect, it } from "vitest";
import { splitSqlStatements } from "../../src/db/sql-statements.ts";

describe("splitting a migration file into statements", () => {
  it("cuts at semicolons outside strings, identifiers, comments and dollar bodies", () => {
    const sql = `-- a comment; not a cut
CREATE TABLE "a;b" (x text DEFAULT 'it''s; here');
/* block; comment */ DO $$ BEGIN PERFORM 1; END $$;
CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $body$ SELECT 'x;y' $body$;
SELECT E'\\'; still inside';
-- only a comment after the last statement;
`;
    const statements = splitSqlStatements(sql);
    expect(statements.map((s) => s.line)).toEqual([1, 3, 4, 5]);
    expect(statements[0]?.text).toContain(`CREATE TABLE "a;b"`);
    expect(statements[1]?.text).toMatch(/END \$\$;$/);
    expect(statements[3]?.text).toBe(`SELECT E'\\'; still inside';`);
  });

  it("keeps a statement without a final semicolon", () => {
    expect(splitSqlStatements("SELECT 1;\nSELECT 2").map((s) => s.text)).toEqual(["SELECT 1;", "SELECT 2"]);
  });
});

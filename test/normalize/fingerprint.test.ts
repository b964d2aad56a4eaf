import { describe, expect, it } from "vitest";
import { fingerprintOf } from "../../src/normalize/fingerprint.ts";

// Stored dedup marks hold fingerprints: a change of how they are computed would make every record
// re-sent after an upgrade a conflict. These values were computed by the implementation that
// hashed each part in its own update (before decision 0053); the one-update form must equal it.
describe("fingerprintOf", () => {
  it("keeps the fingerprints computed before: sorted names, trimmed and folded values, absent as empty", () => {
    expect(fingerprintOf({ amount: 1234n, name: "  JANE   DOE ", empty: undefined, zero: 0 })).toBe("0208e490a0ef3b450e809f3f86c5c1e3eff2c9d7217efa7819129fbdad198b50");
    expect(fingerprintOf({ b: "ünïcødé  €", a: "x\ty", c: "😀" })).toBe("f49c8eab7078a5d326de5f5198c5aaa55a67906480045f531205e726891d8235");
    expect(fingerprintOf({})).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("changes when a value moves from one field to another", () => {
    expect(fingerprintOf({ a: "1", b: "" })).not.toBe(fingerprintOf({ a: "", b: "1" }));
  });
});

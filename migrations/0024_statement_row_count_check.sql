-- A statement sent together with COMMIT (docs/decisions/0051) cannot have its result looked at
-- before the commit: what it must refuse, it refuses inside PostgreSQL. This raises when a
-- statement changed another number of rows than it had to (an idempotency completion that finds
-- its attempt fenced off completes fewer), which aborts the transaction, so the COMMIT sent behind
-- it rolls back. SQLSTATE CL001, a class of our own, so the caller can tell it from every other
-- failure.
CREATE FUNCTION expect_row_count(actual bigint, expected bigint, what text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF actual IS DISTINCT FROM expected THEN
    RAISE EXCEPTION USING ERRCODE = 'CL001', MESSAGE = format('%s: %s rows, expected %s', what, actual, expected);
  END IF;
  RETURN actual;
END
$$;

/**
 * The parameters of one statement assembled from parts that different modules own (each module
 * still writes the SQL of its own tables; docs/decisions/0051): a part adds its values here and
 * writes the `$n` it gets back into its text. Parts appended in a fixed order with a fixed shape
 * give a fixed text, so the statement can be prepared once per connection.
 */
export class StatementParams {
  readonly values: unknown[] = [];

  /** The placeholder of `value`, with the cast the part wants (`p.add(keys, "text[]")` -> `$3::text[]`). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast === undefined ? `$${this.values.length}` : `$${this.values.length}::${cast}`;
  }
}

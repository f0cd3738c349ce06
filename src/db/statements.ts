/**
 * Hot statements compiled once: a statement is written with Kysely (a query builder or a `sql`
 * template) over named parameters, compiled to its SQL text on first use, and from then on each
 * execution only binds that call's values — no query tree built, no SQL text assembled, no
 * per-statement chain of Kysely promises. Outside a transaction it runs straight on the pool.
 *
 * ```ts
 * const deleteTurn = statement<{ id: string; owner: string }>((db, p) =>
 *   db.deleteFrom('chat_pending_turns').where('id', '=', p.id).where('owner', '=', p.owner),
 * );
 * await deleteTurn.execute(db, { id, owner });
 * ```
 *
 * `p` holds placeholders typed as the values they stand for. Every value the statement binds must
 * be one of them: a value captured when it is built (a company id, `true`) would be bound to
 * every later call, so compiling one throws. Constants belong in the SQL (`sql.lit`, `sql\`true\``).
 * The statement's text must not depend on the values: shapes that vary (an optional filter) are
 * statements of their own.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, type Compilable, type QueryCreator, type RawBuilder } from 'kysely';
import { PREPARED_MARK, poolOf, type Executor } from './database.js';
import type { Database } from './schema.js';

/** A named parameter of a statement, standing for one value of each call (a property path of its values). */
class Placeholder {}
const paths = new WeakMap<object, string[]>();

/**
 * Placeholders for `build`: a property read is the parameter of that name, and a property of it a
 * parameter at that path (`p.conversation.id`: the call's `params.conversation.id`).
 */
function placeholder(path: string[]): object {
  const children = new Map<string, object>();
  const made = new Proxy(new Placeholder(), {
    get(_, key) {
      if (typeof key !== 'string') return undefined;
      let found = children.get(key);
      if (!found) children.set(key, (found = placeholder([...path, key])));
      return found;
    },
  });
  paths.set(made, path);
  return made;
}

export interface StatementResult<R> {
  rows: R[];
  /** Rows inserted, updated, deleted or returned. */
  rowCount: number;
}

export interface Statement<P, R> {
  execute(db: Executor, params: P): Promise<StatementResult<R>>;
  /** The SQL text once compiled (tests, logs). */
  readonly text: string | undefined;
}

interface Compiled {
  text: string;
  /** The parameter's path at each position ($1 → slots[0]). */
  slots: string[][];
  /** A named prepared statement's name (text marked by `prepared`), else undefined. */
  name: string | undefined;
}

function compile<P, R>(
  db: Executor,
  build: (db: QueryCreator<Database>, p: P) => Compilable<R> | RawBuilder<R>,
): Compiled {
  const built = build(db, placeholder([]) as P);
  const compiled = 'isRawBuilder' in built ? built.compile(db) : built.compile();
  const slots = compiled.parameters.map((value, i) => {
    const path = value instanceof Placeholder ? paths.get(value) : undefined;
    if (path?.length) return path;
    throw new Error(
      `A compiled statement binds a value that is not a parameter ($${i + 1} of: ${compiled.sql.slice(0, 120)}): write constants into the SQL`,
    );
  });
  const text = compiled.sql;
  const name = text.startsWith(PREPARED_MARK) ? `sb_${createHash('sha1').update(text).digest('hex')}` : undefined;
  return { text, slots, name };
}

function valueAt(params: object, path: string[]): unknown {
  let value: unknown = params;
  for (const key of path) value = (value as Record<string, unknown> | null | undefined)?.[key];
  return value;
}

/** A statement compiled on its first execution; see the module's comment. */
export function statement<P extends object, R = unknown>(
  build: (db: QueryCreator<Database>, p: P) => Compilable<R> | RawBuilder<R>,
): Statement<P, R> {
  let compiled: Compiled | undefined;
  return {
    get text() {
      return compiled?.text;
    },
    async execute(db, params) {
      compiled ??= compile(db, build);
      const { slots } = compiled;
      const values: unknown[] = new Array(slots.length);
      for (let i = 0; i < slots.length; i++) values[i] = valueAt(params, slots[i]!);
      const pool = poolOf(db);
      if (pool) {
        const result = await pool.query<R & object>(
          compiled.name ? { name: compiled.name, text: compiled.text, values } : { text: compiled.text, values },
        );
        return { rows: result.rows, rowCount: result.rowCount ?? 0 };
      }
      // A transaction (or a Kysely of another making): through its own connection.
      const result = await db.executeQuery<R>(CompiledQuery.raw(compiled.text, values));
      return { rows: result.rows, rowCount: Number(result.numAffectedRows ?? result.rows.length) };
    },
  };
}

/**
 * Statements of a few shapes: one compiled per shape key, `build(shape)` giving the statement's
 * builder for that shape. The keys must be bounded (flags, not values).
 */
export function statementShapes<S extends string, P extends object, R = unknown>(
  build: (shape: S) => (db: QueryCreator<Database>, p: P) => Compilable<R> | RawBuilder<R>,
): (shape: S) => Statement<P, R> {
  const shapes = new Map<S, Statement<P, R>>();
  return (shape) => {
    let found = shapes.get(shape);
    if (!found) shapes.set(shape, (found = statement(build(shape))));
    return found;
  };
}

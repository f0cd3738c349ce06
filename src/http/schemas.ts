/**
 * Schema helpers shared by every family: UUIDs, ISO 8601 timestamps, string enums and
 * pagination, so that every route validates the same way and says the same thing when it fails.
 */
import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', ...options });

/** An ISO 8601 date or date-time (`2026-01-31` or `2026-01-31T10:00:00Z`). */
export const IsoDate = (options: SchemaOptions = {}) => Type.String({ format: 'iso-date-time', ...options });

/** A timestamp in responses: ISO 8601 UTC with milliseconds and `Z`. */
export const Timestamp = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });

/** A string limited to `values`, reported as `must be one of: …` when it is not. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The largest `skip`: PostgreSQL's integer maximum (2^31 − 1). No list comes near it, and a
 * bounded offset never overflows the database's bigint or a JS safe integer (docs/decisions.md).
 */
export const MAX_SKIP = 2_147_483_647;

/** skip/limit query parameters with the family's default and maximum page size. */
export function SkipLimit(defaultLimit: number, maxLimit: number) {
  return {
    skip: Type.Integer({ minimum: 0, maximum: MAX_SKIP, default: 0, description: 'Number of records to skip.' }),
    limit: Type.Integer({
      minimum: 1,
      maximum: maxLimit,
      default: defaultLimit,
      description: `Page size (default ${defaultLimit}, max ${maxLimit}).`,
    }),
  };
}

/** `{ data, total, skip, limit }`, the shape of every list the interface leaves unshaped. */
export function Page<T extends TSchema>(item: T, options: SchemaOptions = {}) {
  return Type.Object(
    { data: Type.Array(item), total: Type.Integer(), skip: Type.Integer(), limit: Type.Integer() },
    options,
  );
}

export interface PageOf<T> {
  data: T[];
  total: number;
  skip: number;
  limit: number;
}

export const IdParams = (name: string) => Type.Object({ [name]: Uuid() });

export type Uuid = Static<ReturnType<typeof Uuid>>;

/** Parses a validated `iso-date-time` value; a bare date means midnight UTC. */
export function parseIsoDate(value: string): Date {
  return new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00.000Z` : value);
}

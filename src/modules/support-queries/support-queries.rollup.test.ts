import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import { planWindow, rollupSource } from './support-queries.rollup.js';

const d = (iso: string) => new Date(iso);
const iso = (range: { lo?: Date | undefined; hi?: Date | undefined }) => [
  range.lo?.toISOString(),
  range.hi?.toISOString(),
];

describe('planWindow', () => {
  it('splits a window into whole days, edge hours and raw edges', () => {
    const plan = planWindow(d('2025-01-01T10:30:00Z'), d('2025-01-05T03:15:00Z'));
    expect(plan.raw.map(iso)).toEqual([
      ['2025-01-01T10:30:00.000Z', '2025-01-01T11:00:00.000Z'],
      ['2025-01-05T03:00:00.000Z', '2025-01-05T03:15:00.000Z'],
    ]);
    expect(plan.hourly.map(iso)).toEqual([
      ['2025-01-01T11:00:00.000Z', '2025-01-02T00:00:00.000Z'],
      ['2025-01-05T00:00:00.000Z', '2025-01-05T03:00:00.000Z'],
    ]);
    expect(iso(plan.daily!)).toEqual(['2025-01-02T00:00:00.000Z', '2025-01-05T00:00:00.000Z']);
  });

  it('uses only days for aligned windows and only raw rows inside one hour', () => {
    const aligned = planWindow(d('2025-01-01T00:00:00Z'), d('2025-02-01T00:00:00Z'));
    expect(aligned.raw).toEqual([]);
    expect(aligned.hourly).toEqual([]);
    expect(iso(aligned.daily!)).toEqual(['2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z']);
    const tiny = planWindow(d('2025-01-01T10:05:00Z'), d('2025-01-01T10:55:00Z'));
    expect(tiny).toEqual({
      daily: null,
      hourly: [],
      raw: [{ lo: d('2025-01-01T10:05:00Z'), hi: d('2025-01-01T10:55:00Z') }],
    });
    const sameDay = planWindow(d('2025-01-01T10:05:00Z'), d('2025-01-01T20:00:00Z'));
    expect(sameDay.daily).toBeNull();
    expect(sameDay.hourly.map(iso)).toEqual([['2025-01-01T11:00:00.000Z', '2025-01-01T20:00:00.000Z']]);
  });

  it('leaves open ends to the daily rollup', () => {
    expect(planWindow(undefined, undefined)).toEqual({ daily: { lo: undefined, hi: undefined }, hourly: [], raw: [] });
    const upTo = planWindow(undefined, d('2025-01-05T03:15:00Z'));
    expect(iso(upTo.daily!)).toEqual([undefined, '2025-01-05T00:00:00.000Z']);
    expect(upTo.hourly.map(iso)).toEqual([['2025-01-05T00:00:00.000Z', '2025-01-05T03:00:00.000Z']]);
  });
});

describe('rollupSource SQL', () => {
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const company = '11111111-1111-1111-1111-111111111111';
  const tables = (text: string) => [...text.matchAll(/from (support_\w+)/g)].map((match) => match[1]);

  it('reads days, edge hours and edge rows for a window cut mid-hour', () => {
    const compiled = rollupSource(company, { from: d('2025-01-01T10:30:00Z'), to: d('2025-01-05T03:15:00Z') }).compile(
      db,
    );
    expect(tables(compiled.sql)).toEqual([
      'support_query_daily_live',
      'support_query_hourly_live',
      'support_queries',
      'support_queries',
    ]);
    expect(compiled.sql).toContain('"resolved_at" >= $');
    expect(compiled.parameters).toContain(company);
  });

  it('reads only the daily rollup for whole days, with an agent filter on the key', () => {
    const compiled = rollupSource(
      company,
      { from: d('2025-01-01T00:00:00Z'), to: d('2025-04-01T00:00:00Z') },
      '22222222-2222-2222-2222-222222222222',
    ).compile(db);
    expect(tables(compiled.sql)).toEqual(['support_query_daily_live']);
    expect(compiled.sql).toContain('and agent_key = $');
  });
});

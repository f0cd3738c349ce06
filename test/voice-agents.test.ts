/**
 * The voice agents family over HTTP: records with the spec's defaults, every bound and bad input,
 * roles, tenancy, the curated voice lists and their filters, and the shipped catalog's invariants.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_FORMATS } from '../src/ports/text-to-speech.js';
import {
  CatalogError,
  catalogVoices,
  findCatalogVoice,
  offlineVoiceFor,
  type CuratedVoice,
} from '../src/modules/voice-agents/index.js';
import { OFFLINE_VOICE, validateCatalog } from '../src/modules/voice-agents/voice-catalog.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createAgent } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
});
afterAll(async () => t.close());

const URL = '/api/public/voice-agents';
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const LAYLA = 'sb-ar-msa-layla';

const send = (
  tenant: { headers: Record<string, string> },
  method: 'POST' | 'PUT' | 'DELETE' | 'GET',
  url: string,
  payload?: unknown,
) =>
  t.app.inject({
    method,
    url,
    headers: tenant.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function created(tenant: TestTenant, fields: Record<string, unknown> = {}) {
  const res = await send(tenant, 'POST', URL, { name: 'Front desk', voice_id: RACHEL, ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Record<string, unknown> & { id: string }>();
}

describe('records', () => {
  it('pages the list (skip, limit) oldest first, keeping the array the interface gives', async () => {
    const tenant = await createTenant(t.container);
    const ids = [];
    for (const name of ['One', 'Two', 'Three']) ids.push((await created(tenant, { name })).id);
    const page = (query: string) => send(tenant, 'GET', `${URL}${query}`);
    expect((await page('')).json().map((row: { id: string }) => row.id)).toEqual(ids);
    expect((await page('?skip=1&limit=1')).json().map((row: { id: string }) => row.id)).toEqual([ids[1]]);
    expect((await page('?skip=3')).json()).toEqual([]);
    for (const query of ['?limit=0', '?limit=1001', '?skip=-1', '?limit=x']) {
      const res = await page(query);
      expect(res.statusCode, query).toBe(400);
      expect(Object.keys(res.json()), query).toEqual(['detail']);
    }
  });

  it('creates with the spec defaults and the catalog voice name and language', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const body = await created(tenant);
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Front desk',
      description: '',
      voice_id: RACHEL,
      voice_name: 'Rachel',
      language: 'en',
      model_id: 'eleven_turbo_v2_5',
      active: false,
      temperature: 0.7,
      voice_speed: 100,
      voice_stability: 0.5,
      voice_similarity_boost: 0.5,
      voice_style: 0,
      output_format: 'mp3_44100_128',
      company_id: tenant.companyId,
      main_agent_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const arabic = await created(tenant, { voice_id: LAYLA });
    expect([arabic.voice_name, arabic.language]).toEqual(['Layla', 'ar']);
  });

  it('creates with every field and lists, updates any subset and deletes', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const full = {
      name: 'Arabic desk',
      description: 'Answers in Arabic',
      voice_id: LAYLA,
      voice_name: 'Layla (desk)',
      language: 'ar',
      model_id: 'eleven_multilingual_v2',
      output_format: 'pcm_16000',
      active: true,
      temperature: 0,
      voice_speed: 200,
      voice_stability: 1,
      voice_similarity_boost: 0,
      voice_style: 1,
      main_agent_id: agent.id,
    };
    const record = await created(tenant, full);
    expect(record).toMatchObject(full);
    const list = await send(tenant, 'GET', URL);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([record]);

    const put = await send(tenant, 'PUT', `${URL}/${record.id}`, { voice_speed: 50, active: false });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ ...full, voice_speed: 50, active: false });
    const noop = await send(tenant, 'PUT', `${URL}/${record.id}`, {});
    expect(noop.json()).toMatchObject({ voice_speed: 50 });
    const revoiced = await send(tenant, 'PUT', `${URL}/${record.id}`, { voice_id: RACHEL, main_agent_id: null });
    expect(revoiced.json()).toMatchObject({ voice_id: RACHEL, voice_name: 'Rachel', main_agent_id: null });
    expect((await send(tenant, 'GET', `${URL}/${record.id}`)).json()).toMatchObject({ voice_id: RACHEL });

    const del = await send(tenant, 'DELETE', `${URL}/${record.id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await send(tenant, 'GET', URL)).json()).toEqual([]);
    const again = await send(tenant, 'DELETE', `${URL}/${record.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ detail: `Voice agent not found: ${record.id}` });
  });

  it('unlinks the main agent when the agent is deleted', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const record = await created(tenant, { main_agent_id: agent.id });
    await t.container.db.deleteFrom('agents').where('id', '=', agent.id).execute();
    expect((await send(tenant, 'GET', `${URL}/${record.id}`)).json()).toMatchObject({ main_agent_id: null });
  });
});

describe('bad input', () => {
  let tenant: TestTenant;
  let id: string;
  beforeAll(async () => {
    tenant = await createTenant(t.container);
    id = (await created(tenant)).id;
  });

  const base = { name: 'Desk', voice_id: RACHEL };
  const CASES: [string, Record<string, unknown>, RegExp][] = [
    ['missing name', { voice_id: RACHEL }, /name/],
    ['missing voice_id', { name: 'x' }, /voice_id/],
    ['empty name', { ...base, name: '' }, /name/],
    ['long name', { ...base, name: 'x'.repeat(201) }, /name/],
    ['empty voice_id', { ...base, voice_id: '' }, /voice_id/],
    ['long voice_id', { ...base, voice_id: 'v'.repeat(101) }, /voice_id/],
    [
      'unknown voice',
      { ...base, voice_id: 'NoSuchVoice123' },
      /Invalid field 'voice_id': unknown voice 'NoSuchVoice123'/,
    ],
    ['unknown namespaced voice', { ...base, voice_id: 'sb-ar-nobody' }, /unknown voice/],
    ['name as number', { ...base, name: 5 }, /name/],
    ['active as string', { ...base, active: 'true' }, /active/],
    ['temperature as string', { ...base, temperature: '0.5' }, /temperature/],
    ['temperature above 1', { ...base, temperature: 1.01 }, /temperature/],
    ['temperature below 0', { ...base, temperature: -0.1 }, /temperature/],
    ['voice_speed below 50', { ...base, voice_speed: 49 }, /voice_speed/],
    ['voice_speed above 200', { ...base, voice_speed: 201 }, /voice_speed/],
    ['voice_stability above 1', { ...base, voice_stability: 2 }, /voice_stability/],
    ['voice_similarity_boost below 0', { ...base, voice_similarity_boost: -1 }, /voice_similarity_boost/],
    ['voice_style above 1', { ...base, voice_style: 1.5 }, /voice_style/],
    [
      'unknown language',
      { ...base, language: 'xx' },
      /Invalid field 'language': unknown language 'xx'; supported: en, ar/,
    ],
    ['language too long', { ...base, language: 'english' }, /language/],
    [
      'unknown format',
      { ...base, output_format: 'ogg_48000' },
      /Invalid field 'output_format'.*supported: mp3_22050_32, .*wav_44100/,
    ],
    ['malformed main_agent_id', { ...base, main_agent_id: 'not-a-uuid' }, /main_agent_id/],
    [
      'unknown main agent',
      { ...base, main_agent_id: randomUUID() },
      /Invalid field 'main_agent_id': no agent .* in your company/,
    ],
    ['unknown field', { ...base, company_id: randomUUID() }, /unknown field 'company_id'/],
    ['NUL in name', { ...base, name: 'a\u0000b' }, /./],
  ];
  for (const [label, payload, detail] of CASES) {
    it(`POST refuses ${label} with 400 {detail}`, async () => {
      const res = await send(tenant, 'POST', URL, payload);
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json<{ detail: string }>();
      expect(Object.keys(body)).toEqual(['detail']);
      expect(body.detail).toMatch(detail);
    });
  }
  for (const [label, payload, detail] of CASES.filter(([label]) => !label.startsWith('missing'))) {
    it(`PUT refuses ${label} with 400 and changes nothing`, async () => {
      const { name: _name, voice_id: _voice, ...rest } = payload;
      const probe = Object.keys(rest).length ? rest : payload;
      const res = await send(tenant, 'PUT', `${URL}/${id}`, probe);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ detail: string }>().detail).toMatch(detail);
      expect((await send(tenant, 'GET', `${URL}/${id}`)).json()).toMatchObject({
        name: 'Front desk',
        voice_id: RACHEL,
      });
    });
  }

  it('refuses a non-object body and a malformed id', async () => {
    expect((await send(tenant, 'POST', URL, [1, 2])).statusCode).toBe(400);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await send(tenant, method, `${URL}/not-a-uuid`, method === 'PUT' ? { name: 'x' } : undefined);
      expect(res.statusCode, method).toBe(400);
      expect(Object.keys(res.json())).toEqual(['detail']);
    }
  });

  it('accepts every supported output format', async () => {
    for (const output_format of OUTPUT_FORMATS) {
      const res = await send(tenant, 'PUT', `${URL}/${id}`, { output_format });
      expect(res.statusCode, output_format).toBe(200);
    }
  });
});

describe('roles and tenancy', () => {
  it('requires a key (401) and lets members read but not write (403)', async () => {
    expect((await t.app.inject({ method: 'GET', url: URL })).statusCode).toBe(401);
    const tenant = await createTenant(t.container, 'developer');
    const record = await created(tenant);
    const member = await tenant.member('member');
    expect((await send(member, 'GET', URL)).statusCode).toBe(200);
    expect((await send(member, 'GET', `${URL}/english`)).statusCode).toBe(200);
    for (const [method, url, payload] of [
      ['POST', URL, { name: 'x', voice_id: RACHEL }],
      ['PUT', `${URL}/${record.id}`, { name: 'y' }],
      ['DELETE', `${URL}/${record.id}`, undefined],
    ] as const) {
      const res = await send(member, method, url, payload);
      expect(res.statusCode, method).toBe(403);
      expect(res.json()).toEqual({ detail: 'This operation needs the developer role; your role is member' });
    }
    expect((await send(tenant, 'GET', URL)).json()).toEqual([record]);
  });

  it("keeps companies apart: another company's voice agent is 404 and its agent is 400", async () => {
    const a = await createTenant(t.container);
    const b = await createTenant(t.container);
    const record = await created(a);
    const agentOfB = await createAgent(t.container, b);
    expect((await send(b, 'GET', URL)).json()).toEqual([]);
    for (const [method, payload] of [
      ['GET', undefined],
      ['PUT', { name: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await send(b, method, `${URL}/${record.id}`, payload);
      expect(res.statusCode, method).toBe(404);
      expect(res.json()).toEqual({ detail: `Voice agent not found: ${record.id}` });
    }
    const linked = await send(a, 'PUT', `${URL}/${record.id}`, { main_agent_id: agentOfB.id });
    expect(linked.statusCode).toBe(400);
    expect(linked.json()).toEqual({
      detail: `Invalid field 'main_agent_id': no agent ${agentOfB.id} in your company`,
    });
    expect((await send(a, 'GET', `${URL}/${record.id}`)).json()).toMatchObject({
      name: 'Front desk',
      main_agent_id: null,
    });
  });
});

describe('curated voices', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await createTenant(t.container, 'member');
  });
  const voices = async (path: string) => {
    const res = await send(tenant, 'GET', `${URL}/${path}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ voices: CuratedVoice[] }>().voices;
  };

  it('lists English voices, featured first, with the catalog fields', async () => {
    const all = await voices('english');
    expect(all.length).toBeGreaterThanOrEqual(12);
    expect(all.every((voice) => voice.languages.includes('en'))).toBe(true);
    const firstPlain = all.findIndex((voice) => !voice.featured);
    expect(all.slice(firstPlain).every((voice) => !voice.featured)).toBe(true);
    expect(all.find((voice) => voice.voice_id === RACHEL)).toEqual(findCatalogVoice(RACHEL));
    expect(Object.keys(all[0]!).sort()).toEqual(
      [
        'accent',
        'category',
        'description',
        'featured',
        'gender',
        'languages',
        'name',
        'offline_voice',
        'voice_id',
      ].sort(),
    );
  });

  it('filters English voices by gender, category, accent, featured_only and max_voices', async () => {
    const female = await voices('english?gender=female');
    expect(female.length).toBeGreaterThan(0);
    expect(female.every((voice) => voice.gender === 'female')).toBe(true);
    const curated = await voices('english?category=curated');
    expect(curated.every((voice) => voice.category === 'curated' && voice.voice_id.startsWith('sb-'))).toBe(true);
    for (const accent of ['American', 'British', 'Australian', 'Irish', 'Indian', 'Scottish']) {
      const found = await voices(`english?accent=${accent.toLowerCase()}`);
      expect(found.length, accent).toBeGreaterThan(0);
      expect(found.every((voice) => voice.accent === accent)).toBe(true);
    }
    const featured = await voices('english?featured_only=true');
    expect(featured.length).toBeGreaterThan(0);
    expect(featured.every((voice) => voice.featured)).toBe(true);
    expect(await voices('english?max_voices=3')).toHaveLength(3);
    expect(await voices('english?gender=male&accent=British&featured_only=true')).toEqual([
      expect.objectContaining({ name: 'George' }),
    ]);
    expect(await voices('english?accent=Martian')).toEqual([]);
  });

  it('lists Arabic voices by gender and the multilingual set', async () => {
    const arabic = await voices('arabic');
    expect(arabic.length).toBeGreaterThanOrEqual(6);
    expect(arabic.every((voice) => voice.languages.includes('ar'))).toBe(true);
    for (const gender of ['male', 'female']) {
      const some = await voices(`arabic?gender=${gender}`);
      expect(some.length).toBeGreaterThanOrEqual(3);
      expect(some.every((voice) => voice.gender === gender)).toBe(true);
    }
    const accents = new Set(arabic.map((voice) => voice.accent));
    for (const accent of ['Modern Standard', 'Gulf', 'Egyptian', 'Levantine']) expect(accents).toContain(accent);
    const multi = await voices('multilingual');
    expect(multi.length).toBeGreaterThanOrEqual(2);
    expect(multi.every((voice) => voice.languages.includes('en') && voice.languages.includes('ar'))).toBe(true);
  });

  const BAD: string[] = [
    'english?gender=robot',
    'english?category=famous',
    'english?accent=',
    `english?accent=${'a'.repeat(51)}`,
    'english?featured_only=maybe',
    'english?max_voices=0',
    'english?max_voices=101',
    'english?max_voices=ten',
    'english?max_voices=1.5',
    'arabic?gender=neutral',
    'arabic?gender=',
  ];
  for (const path of BAD) {
    it(`refuses ${path} with 400 {detail}`, async () => {
      const res = await send(tenant, 'GET', `${URL}/${path}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json())).toEqual(['detail']);
    });
  }
});

describe('the catalog', () => {
  const all = catalogVoices();

  it('has 12+ English voices across genders and accents, 6+ Arabic and a multilingual set', () => {
    const english = all.filter((voice) => voice.languages.includes('en'));
    expect(english.length).toBeGreaterThanOrEqual(12);
    expect(new Set(english.map((voice) => voice.gender))).toEqual(new Set(['male', 'female', 'neutral']));
    for (const accent of ['American', 'British', 'Australian', 'Irish', 'Indian']) {
      expect(
        english.some((voice) => voice.accent === accent),
        accent,
      ).toBe(true);
    }
    const arabicOnly = all.filter((voice) => voice.languages.includes('ar') && !voice.languages.includes('en'));
    expect(arabicOnly.length).toBeGreaterThanOrEqual(6);
    expect(all.filter((voice) => voice.languages.length === 2).length).toBeGreaterThanOrEqual(2);
  });

  it('has unique ids, premade voices with ElevenLabs-shaped ids and our own namespaced sb-', () => {
    expect(new Set(all.map((voice) => voice.voice_id)).size).toBe(all.length);
    for (const voice of all) {
      if (voice.category === 'premade') expect(voice.voice_id).toMatch(/^[A-Za-z0-9]{20}$/);
      else expect(voice.voice_id).toMatch(/^sb-[a-z0-9-]+$/);
    }
  });

  it('gives every entry a well-formed offline voice of its language and gender', () => {
    for (const voice of all) {
      const match = OFFLINE_VOICE.exec(voice.offline_voice);
      expect(match, voice.voice_id).not.toBeNull();
      expect(voice.languages.some((code) => match![1]!.startsWith(code))).toBe(true);
      if (voice.gender !== 'neutral') expect(match![2]![0]).toBe(voice.gender[0]);
    }
    const amira = findCatalogVoice('sb-multi-amira')!;
    expect([offlineVoiceFor(amira, 'ar'), offlineVoiceFor(amira, 'en')]).toEqual(['ar+f2', 'en-us+f2']);
    expect(offlineVoiceFor(findCatalogVoice(RACHEL)!)).toBe('en-us+f1');
    expect(findCatalogVoice('nope')).toBeUndefined();
  });

  it('refuses a broken catalog naming the entry and the problem', () => {
    const entry = { ...all[0]! };
    const broken = (voices: unknown[]) => () => validateCatalog({ version: 1, voices });
    expect(broken([entry, entry])).toThrow(
      new CatalogError(`voices.catalog.json: voice ${entry.voice_id} is listed twice`),
    );
    expect(broken([{ ...entry, offline_voice: 'en-us' }])).toThrow(/offline_voice en-us is not/);
    expect(broken([{ ...entry, offline_voice: 'ar+f1' }])).toThrow(/speaks none of en/);
    expect(broken([{ ...entry, offline_voice: 'en-us+m1' }])).toThrow(/does not match gender female/);
    expect(broken([{ ...entry, gender: 'other' }])).toThrow(/\/voices\/0\/gender/);
    expect(() => validateCatalog({ voices: [] })).toThrow(CatalogError);
  });
});

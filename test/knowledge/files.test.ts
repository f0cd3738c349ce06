import { Document as DocxDocument, Packer, Paragraph } from 'docx';
import { PDFDocument, PDFHexString, StandardFonts } from 'pdf-lib';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { multipart, waitForTask } from './helpers.js';

const PDF = 'application/pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

async function makePdf(lines: string[], options: { encrypted?: boolean } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage();
  lines.forEach((line, i) => page.drawText(line, { x: 40, y: 780 - i * 16, size: 11, font }));
  if (options.encrypted) {
    // A standard security handler whose user password is not empty: readers must ask for it.
    const context = doc.context;
    context.trailerInfo.Encrypt = context.register(
      context.obj({
        Filter: 'Standard',
        V: 1,
        R: 2,
        Length: 40,
        P: -4,
        O: PDFHexString.of('ab'.repeat(32)),
        U: PDFHexString.of('cd'.repeat(32)),
      }),
    );
    context.trailerInfo.ID = context.obj([PDFHexString.of('01'.repeat(16)), PDFHexString.of('01'.repeat(16))]);
  }
  return doc.save({ useObjectStreams: false });
}

async function makeDocx(paragraphs: string[]): Promise<Uint8Array> {
  const doc = new DocxDocument({ sections: [{ children: paragraphs.map((text) => new Paragraph(text)) }] });
  return new Uint8Array(await Packer.toBuffer(doc));
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', MAX_UPLOAD_MB: '1' });
});
afterAll(async () => t?.close());

function upload(tenant: TestTenant, fields: Record<string, string>, file?: Parameters<typeof multipart>[1]) {
  const form = multipart(fields, file);
  return t.app.inject({
    method: 'POST',
    url: '/api/public/documents/upload/file',
    headers: { ...tenant.headers, ...form.headers },
    payload: form.payload,
  });
}

describe('file uploads', () => {
  it('extracts a PDF made with pdf-lib and makes it searchable', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const bytes = await makePdf([
      'Warranty terms for the X200 vacuum cleaner.',
      'The motor is covered for five years.',
      'Batteries are covered for one year.',
    ]);
    const response = await upload(
      tenant,
      { document_title: 'Warranty', categories: '["warranty"]' },
      { name: 'warranty.pdf', type: PDF, bytes },
    );
    expect(response.statusCode).toBe(202);
    expect(response.json().status).toBe('pending');
    const task = await waitForTask(t, tenant.headers, response.json().task_id);
    expect(task).toMatchObject({ status: 'completed', error: null });
    const doc = (
      await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
    ).json();
    expect(doc).toMatchObject({
      source_type: 'file',
      file_name: 'warranty.pdf',
      mime_type: PDF,
      categories: ['warranty'],
      size_bytes: bytes.length,
      language: 'en',
    });
    expect(doc.content).toContain('motor is covered for five years');
    const search = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query: 'how long is the motor warranty', search_method: {}, categories: ['warranty'] },
      })
    ).json();
    expect(search.results[0].document_id).toBe(task.document_id);
  });

  it('extracts a DOCX made with docx, Arabic included', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const bytes = await makeDocx([
      'دليل المستخدم للمكنسة الكهربائية.',
      'يغطي الضمان المحرك لمدة خمس سنوات، والبطارية لمدة سنة واحدة.',
    ]);
    const response = await upload(tenant, { document_title: 'دليل' }, { name: 'guide.docx', type: DOCX, bytes });
    expect(response.statusCode).toBe(202);
    const task = await waitForTask(t, tenant.headers, response.json().task_id);
    expect(task.status).toBe('completed');
    const doc = (
      await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
    ).json();
    expect(doc.language).toBe('ar');
    expect(doc.content).toContain('يغطي الضمان المحرك');
  });

  it('accepts application/octet-stream when the name and the bytes agree', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await upload(
      tenant,
      { document_title: 'Octet' },
      { name: 'notes.pdf', type: 'application/octet-stream', bytes: await makePdf(['Octet stream upload works.']) },
    );
    expect(response.statusCode).toBe(202);
    expect((await waitForTask(t, tenant.headers, response.json().task_id)).status).toBe('completed');
  });

  it.each([
    ['an encrypted PDF', { name: 'locked.pdf', type: PDF }, 'encrypted', /encrypted/],
    ['a PDF with no text', { name: 'blank.pdf', type: PDF }, 'blank', /No text could be extracted/],
    ['a corrupt PDF', { name: 'broken.pdf', type: PDF }, 'corrupt', /PDF could not be read/],
    ['a zip that is not a DOCX', { name: 'fake.docx', type: DOCX }, 'zip', /not a readable DOCX/],
  ])('fails the task of %s with an error that says so', async (_label, file, kind, error) => {
    const tenant = await createTenant(t.container, 'developer');
    const bytes =
      kind === 'encrypted'
        ? await makePdf(['Secret'], { encrypted: true })
        : kind === 'blank'
          ? await makePdf([])
          : kind === 'corrupt'
            ? new TextEncoder().encode('%PDF-1.7\nthis is not really a pdf\n%%EOF')
            : zipSync({ 'readme.txt': strToU8('not a word processing document') });
    const response = await upload(tenant, { document_title: 'Bad' }, { ...file, bytes });
    expect(response.statusCode).toBe(202);
    const task = await waitForTask(t, tenant.headers, response.json().task_id);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(error);
    expect(task.completed_at).not.toBeNull();
  });

  it('refuses other types (415), bytes that contradict the declared type (415) and files over MAX_UPLOAD_MB (413)', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const video = await upload(
      tenant,
      { document_title: 'T' },
      { name: 'clip.mp4', type: 'video/mp4', bytes: new Uint8Array([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70]) },
    );
    expect(video.statusCode).toBe(415);
    expect(video.json().detail).toMatch(/Unsupported file type video\/mp4 \(clip.mp4\); supported: PDF, DOCX/);
    const liar = await upload(
      tenant,
      { document_title: 'T' },
      { name: 'x.pdf', type: PDF, bytes: await makeDocx(['not a pdf']) },
    );
    expect(liar.statusCode).toBe(415);
    expect(liar.json().detail).toMatch(/declared as PDF but its content is DOCX/);
    const big = new Uint8Array(1024 * 1024 + 10);
    big.set(new TextEncoder().encode('%PDF-1.7\n'));
    const tooLarge = await upload(tenant, { document_title: 'T' }, { name: 'big.pdf', type: PDF, bytes: big });
    expect(tooLarge.statusCode).toBe(413);
    expect(Object.keys(tooLarge.json())).toEqual(['detail']);
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: tenant.headers,
      payload: { document_title: 'x' },
    });
    expect(json.statusCode).toBe(415);
  });

  it.each([
    [{}, true, /document_title/],
    [{ document_title: 'x' }, false, /file is required/],
    [{ document_title: 'x', categories: 'faq' }, true, /categories must be a JSON array/],
    [{ document_title: 'x', categories: '[1]' }, true, /categories must be a JSON array/],
    [{ document_title: 'x', collection_id: 'abc' }, true, /collection_id must be a UUID/],
  ])('rejects the form %j with 400', async (fields, withFile, detail) => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await upload(
      tenant,
      fields,
      withFile ? { name: 'a.pdf', type: PDF, bytes: await makePdf(['x']) } : undefined,
    );
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(detail);
  });

  it('refuses a member (403)', async () => {
    const tenant = await createTenant(t.container, 'member');
    const response = await upload(
      tenant,
      { document_title: 'x' },
      { name: 'a.pdf', type: PDF, bytes: await makePdf(['x']) },
    );
    expect(response.statusCode).toBe(403);
  });
});

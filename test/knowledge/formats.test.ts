import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import {
  makeEml,
  makeOdp,
  makeOds,
  makeOdt,
  makePdfWithJavaScript,
  makePptx,
  makeScannedPdf,
  makeTextImage,
  makeTextTiff,
  makeXlsx,
} from './file-builders.js';
import { multipart, waitForTask } from './helpers.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', MAX_UPLOAD_MB: '32' });
  tenant = await createTenant(t.container, 'developer');
});
afterAll(async () => t?.close());

const text = (value: string) => new TextEncoder().encode(value);

function upload(file: { name: string; type: string; bytes: Uint8Array }, title = file.name) {
  const form = multipart({ document_title: title }, file);
  return t.app.inject({
    method: 'POST',
    url: '/api/public/documents/upload/file',
    headers: { ...tenant.headers, ...form.headers },
    payload: form.payload,
  });
}

/** Uploads, runs the task, and returns the task, the document and its chunks' texts. */
async function ingest(file: { name: string; type: string; bytes: Uint8Array }) {
  const response = await upload(file);
  expect(response.statusCode, response.body).toBe(202);
  const task = await waitForTask(t, tenant.headers, response.json().task_id, 120_000);
  const doc = (
    await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
  ).json();
  const chunks = await t.container.db
    .selectFrom('kb_chunks')
    .select('text')
    .where('document_id', '=', String(task.document_id).replace(/^doc_/, ''))
    .orderBy('ordinal')
    .execute();
  return { task, doc, chunks: chunks.map((chunk) => chunk.text) };
}

const CSV = `Plan,Monthly price,Cameras included,Cloud storage
Basic,4.99 EUR,1,7 days
Plus,9.99 EUR,4,30 days
"Pro, business",19.99 EUR,unlimited,60 days
`;

describe('file types, read by their structure', () => {
  it('reads CSV rows as records under their header, the header repeated in every chunk', async () => {
    const rows = Array.from(
      { length: 60 },
      (_, i) => `Store ${i + 1};Street ${i + 1};Mon-Sat 9:00-19:00;+33 1 00 00 ${String(i).padStart(2, '0')}`,
    );
    const { task, doc, chunks } = await ingest({
      name: 'stores.csv',
      type: 'text/csv',
      bytes: text(`Shop;Address;Opening hours;Phone\n${rows.join('\n')}\n`),
    });
    expect(task.status).toBe('completed');
    expect(doc.mime_type).toBe('text/csv');
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk).toContain('Columns: Shop | Address | Opening hours | Phone');
    expect(chunks.join('\n')).toContain('Shop: Store 42; Address: Street 42; Opening hours: Mon-Sat 9:00-19:00');
    expect(task.progress).toEqual({ stage: 'indexing', done: chunks.length, total: chunks.length });
  });

  it('reads quoted CSV fields, and a .csv sent as application/vnd.ms-excel', async () => {
    const { task, chunks } = await ingest({ name: 'plans.csv', type: 'application/vnd.ms-excel', bytes: text(CSV) });
    expect(task.status).toBe('completed');
    expect(chunks.join('\n')).toContain('Plan: Pro, business; Monthly price: 19.99 EUR; Cameras included: unlimited');
  });

  it('reads XLSX sheets as tables (shared and inline strings, numbers), one table per sheet', async () => {
    const bytes = makeXlsx([
      {
        name: 'Prices',
        rows: [
          ['Plan', 'Price', 'Cameras'],
          ['Basic', 4.99, 1],
          ['Plus', 9.99, 4],
        ],
      },
      {
        name: 'Shipping',
        rows: [
          ['Country', 'Days'],
          ['France', 2],
          ['Germany', 3],
        ],
      },
    ]);
    const { task, doc, chunks } = await ingest({ name: 'book.xlsx', type: 'application/octet-stream', bytes });
    expect(task.status).toBe('completed');
    expect(doc.mime_type).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(chunks).toEqual([
      'Prices\nColumns: Plan | Price | Cameras\nPlan: Basic; Price: 4.99; Cameras: 1\nPlan: Plus; Price: 9.99; Cameras: 4',
      'Shipping\nColumns: Country | Days\nCountry: France; Days: 2\nCountry: Germany; Days: 3',
    ]);
  });

  it('reads ODS sheets, repeated cells and rows included but bounded', async () => {
    const bytes = makeOds([
      {
        name: 'Hours',
        rows: [
          ['Day', 'Opens', 'Closes'],
          ['Monday', '9:00', '18:00'],
          ['Saturday', '10:00', '16:00'],
        ],
      },
    ]);
    const { task, chunks } = await ingest({
      name: 'hours.ods',
      type: 'application/vnd.oasis.opendocument.spreadsheet',
      bytes,
    });
    expect(task.status).toBe('completed');
    expect(chunks).toEqual([
      'Hours\nColumns: Day | Opens | Closes\nDay: Monday; Opens: 9:00; Closes: 18:00\nDay: Saturday; Opens: 10:00; Closes: 16:00',
    ]);
  });

  it('reads PPTX slides with their titles and speaker notes (slide numbers left out)', async () => {
    const bytes = makePptx([
      {
        title: 'Pairing the camera',
        body: ['Hold the button for five seconds.', 'The light blinks blue.'],
        notes: 'Mention the QR code fallback.',
      },
      { title: 'Resetting', body: ['Press reset with a pin for ten seconds.'] },
    ]);
    const { task, doc, chunks } = await ingest({
      name: 'training.pptx',
      type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      bytes,
    });
    expect(task.status).toBe('completed');
    expect(chunks[0]).toBe(
      'Slide 1: Pairing the camera\nHold the button for five seconds. The light blinks blue. Speaker notes: Mention the QR code fallback.',
    );
    expect(chunks[1]).toBe('Slide 2: Resetting\nPress reset with a pin for ten seconds.');
    expect(doc.content).not.toMatch(/^1$/m);
  });

  it('reads ODP slides and notes', async () => {
    const bytes = makeOdp([
      { title: 'Warranty', body: ['Two years on every camera.'], notes: 'Say that batteries have one year.' },
    ]);
    const { task, chunks } = await ingest({
      name: 'deck.odp',
      type: 'application/vnd.oasis.opendocument.presentation',
      bytes,
    });
    expect(task.status).toBe('completed');
    expect(chunks).toEqual([
      'Slide 1: Warranty\nTwo years on every camera. Speaker notes: Say that batteries have one year.',
    ]);
  });

  it('reads ODT headings, paragraphs and tables, the heading path carried into each chunk', async () => {
    const long = Array.from(
      { length: 30 },
      (_, i) => `Step ${i + 1} of the installation keeps the camera level and dry.`,
    ).join(' ');
    const bytes = makeOdt([
      { h: 'Installation guide', level: 1 },
      { h: 'Mounting', level: 2 },
      { p: long },
      { h: 'Sizes', level: 2 },
      {
        table: [
          ['Model', 'Width'],
          ['C1', '6 cm'],
          ['C2', '8 cm'],
        ],
      },
    ]);
    const { task, chunks } = await ingest({
      name: 'guide.odt',
      type: 'application/vnd.oasis.opendocument.text',
      bytes,
    });
    expect(task.status).toBe('completed');
    const mounting = chunks.filter((chunk) => chunk.includes('Step'));
    expect(mounting.length).toBeGreaterThan(1);
    for (const chunk of mounting) expect(chunk.startsWith('Installation guide > Mounting\n')).toBe(true);
    expect(chunks.at(-1)).toBe(
      'Installation guide > Sizes\nColumns: Model | Width\nModel: C1; Width: 6 cm\nModel: C2; Width: 8 cm',
    );
  });

  it('reads Markdown headings and pipe tables, and HTML headings and tables', async () => {
    const md = await ingest({
      name: 'faq.md',
      type: 'text/plain',
      bytes: text(
        '---\ntitle: FAQ\n---\n# Billing\n\n## Refunds\n\nRefunds take **five** business days, see [the policy](https://x.test).\n\n| Plan | Price |\n|---|---:|\n| Basic | 5 |\n',
      ),
    });
    expect(md.doc.mime_type).toBe('text/markdown');
    expect(md.chunks).toEqual([
      'Billing > Refunds\nRefunds take five business days, see the policy.',
      'Billing > Refunds\nColumns: Plan | Price\nPlan: Basic; Price: 5',
    ]);
    const html = await ingest({
      name: 'page.html',
      type: 'text/html',
      bytes: text(
        '<!doctype html><html><head><title>Help</title><script>alert(1)</script></head><body><h1>Delivery</h1><p>Parcels leave the warehouse within one day.</p><table><tr><th>Zone</th><th>Days</th></tr><tr><td>EU</td><td>3</td></tr></table></body></html>',
      ),
    });
    expect(html.task.status).toBe('completed');
    expect(html.chunks.join('\n')).toContain('Delivery\nParcels leave the warehouse within one day.');
    expect(html.chunks.join('\n')).toContain('Columns: Zone | Days\nZone: EU; Days: 3');
    expect(html.doc.content).not.toContain('alert');
  });

  it('reads plain text (UTF-16 and Windows-1252 too), JSON records and RTF', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Horaires : ouvert le samedi.', 'utf16le')]);
    const plain = await ingest({ name: 'notes.txt', type: 'text/plain', bytes: new Uint8Array(utf16) });
    expect(plain.doc.content).toBe('Horaires : ouvert le samedi.');
    const latin = await ingest({
      name: 'cafe.txt',
      type: 'text/plain',
      bytes: new Uint8Array(Buffer.from('Caf\xe9 cr\xe8me', 'latin1')),
    });
    expect(latin.doc.content).toBe('Café crème');
    const json = await ingest({
      name: 'faq.json',
      type: 'application/json',
      bytes: text(
        JSON.stringify({ shop: 'Camly', faq: [{ question: 'Do you ship to Spain?', answer: 'Yes, in four days.' }] }),
      ),
    });
    expect(json.chunks).toEqual([
      'shop: Camly',
      'faq\nColumns: question | answer\nquestion: Do you ship to Spain?; answer: Yes, in four days.',
    ]);
    const rtf = await ingest({
      name: 'letter.rtf',
      type: 'application/rtf',
      bytes: text(
        "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Arial;}}{\\colortbl;\\red0\\green0\\blue0;}{\\*\\generator Writer;}\\f0\\fs24 Caf\\'e9 opening hours\\par Price: 5 \\u8364? per cup\\par {\\b Closed} on Sundays.}",
      ),
    });
    expect(rtf.doc.content).toBe('Café opening hours\nPrice: 5 € per cup\nClosed on Sundays.');
  });

  it('reads an e-mail with its text attachments (CSV, HTML), not its images', async () => {
    const bytes = makeEml({
      from: 'Support <support@camly.test>',
      to: 'team@camly.test',
      subject: 'New return address',
      text: 'From Monday, returns go to 12 Rue des Lilas, Lyon.',
      attachments: [
        { name: 'zones.csv', type: 'text/csv', content: 'Zone,Carrier\nNorth,Colissimo\n' },
        {
          name: 'note.html',
          type: 'text/html',
          content: '<html><body><h2>Labels</h2><p>Print the label from your account.</p></body></html>',
        },
        { name: 'logo.png', type: 'image/png', content: '\x89PNG fake' },
      ],
    });
    const { task, doc, chunks } = await ingest({ name: 'mail.eml', type: 'message/rfc822', bytes });
    expect(task.status).toBe('completed');
    expect(doc.content).toContain('From: Support <support@camly.test>');
    expect(doc.content).toContain('returns go to 12 Rue des Lilas');
    const all = chunks.join('\n');
    expect(all).toContain(
      'New return address > Attachment: zones.csv\nColumns: Zone | Carrier\nZone: North; Carrier: Colissimo',
    );
    expect(all).toContain('Attachment: note.html > Labels\nPrint the label from your account.');
    expect(all).not.toContain('logo.png');
  });
});

describe('content sniffing and limits at upload', () => {
  it('tells the type by the content when the name and type say nothing, and refuses contradictions', async () => {
    const xlsx = makeXlsx([{ name: 'S', rows: [['A'], ['x']] }]);
    const noName = await upload({ name: 'upload', type: 'application/octet-stream', bytes: xlsx });
    expect(noName.statusCode).toBe(202);
    const doc = (
      await t.app.inject({
        method: 'GET',
        url: `/api/public/documents/${noName.json().document_id}`,
        headers: tenant.headers,
      })
    ).json();
    expect(doc.mime_type).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const liar = await upload({
      name: 'deck.pptx',
      type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      bytes: xlsx,
    });
    expect(liar.statusCode).toBe(415);
    expect(liar.json()).toEqual({ detail: 'The file was declared as PPTX but its content is XLSX (deck.pptx)' });
    const exe = await upload({
      name: 'tool.csv',
      type: 'text/csv',
      bytes: new Uint8Array([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0]),
    });
    expect(exe.statusCode).toBe(415);
    expect(exe.json().detail).toMatch(/declared as CSV but its content is binary data/);
    const legacy = await upload({
      name: 'old.doc',
      type: 'application/msword',
      bytes: new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
    });
    expect(legacy.statusCode).toBe(415);
    const png = await upload({ name: 'scan.pdf', type: 'application/pdf', bytes: makeTextImage(['x']) });
    expect(png.json().detail).toMatch(/declared as PDF but its content is PNG/);
  });

  it('refuses a zip bomb at upload (413), and one whose directory lies when it is read', async () => {
    const zeros = new Uint8Array(60 * 1024 * 1024);
    const bomb = zipSync({
      mimetype: [strToU8('application/vnd.oasis.opendocument.text'), { level: 0 }],
      'content.xml': [zeros, { level: 9 }],
    });
    const refused = await upload({ name: 'bomb.odt', type: 'application/vnd.oasis.opendocument.text', bytes: bomb });
    expect(refused.statusCode).toBe(413);
    expect(refused.json().detail).toMatch(
      /content.xml expands to 60 MiB; at most 48 MiB per entry|expands \d+ times \(a zip bomb\?\)/,
    );
    // The same archive with the sizes in its headers rewritten to 1 KiB: only the inflating tells.
    const liar = new Uint8Array(bomb);
    const view = new DataView(liar.buffer);
    for (let at = 0; at + 4 <= liar.length; at++) {
      const signature = view.getUint32(at, true);
      if (signature === 0x04034b50 && liar.subarray(at + 30, at + 41).toString() !== '') {
        if (new TextDecoder().decode(liar.subarray(at + 30, at + 41)) === 'content.xml')
          view.setUint32(at + 22, 1024, true);
      } else if (
        signature === 0x02014b50 &&
        new TextDecoder().decode(liar.subarray(at + 46, at + 57)) === 'content.xml'
      ) {
        view.setUint32(at + 24, 1024, true);
      }
    }
    const { task } = await ingest({ name: 'liar.odt', type: 'application/vnd.oasis.opendocument.text', bytes: liar });
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/expands beyond its declared sizes|zip bomb/);
  });

  it('expands no XML entities (billion laughs, external files)', async () => {
    const laughs =
      '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"><!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol9 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">]>';
    const xlsx = makeXlsx([{ name: 'S', rows: [['&lol9;'], ['Safe value']] }], { doctype: laughs });
    const first = await ingest({ name: 'laughs.xlsx', type: 'application/octet-stream', bytes: xlsx });
    expect(first.task.status).toBe('completed');
    expect(first.doc.content).not.toContain('lollol');
    expect(first.doc.content).toContain('Safe value');
    const odt = makeOdt(
      [{ p: '&xxe;' }, { p: 'Visible paragraph.' }],
      '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    );
    const second = await ingest({ name: 'xxe.odt', type: 'application/vnd.oasis.opendocument.text', bytes: odt });
    expect(second.task.status).toBe('completed');
    expect(second.doc.content).not.toContain('root:');
    expect(second.doc.content).toContain('Visible paragraph.');
  });

  it('fails a CSV with a huge row with the row named, and refuses a CSV over its type limit', async () => {
    const huge = await ingest({ name: 'huge.csv', type: 'text/csv', bytes: text(`a,b\n1,"${'x'.repeat(150_000)}"\n`) });
    expect(huge.task.status).toBe('failed');
    expect(huge.task.error).toBe('Row 2 is longer than 100000 characters (an unclosed quote, or not a CSV file?)');
    const image = new Uint8Array(21 * 1024 * 1024);
    image.set(makeTextImage(['x']).subarray(0, 100));
    const tooBig = await upload({ name: 'big.png', type: 'image/png', bytes: image });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().detail).toBe('PNG files may be at most 20 MiB');
  });

  it('reads the text of a PDF with a JavaScript action without running it', async () => {
    const { task, doc } = await ingest({
      name: 'script.pdf',
      type: 'application/pdf',
      bytes: await makePdfWithJavaScript(['Opening hours are nine to five.']),
    });
    expect(task.status).toBe('completed');
    expect(doc.content).toBe('Opening hours are nine to five.');
    expect((globalThis as Record<string, unknown>).__pdfScriptRan).toBeUndefined();
  });
});

describe('OCR', () => {
  it('reads PNG, JPEG and TIFF images of known text, with the confidence kept', async () => {
    const lines = ['Refunds take seven business days', 'Call support on weekdays'];
    for (const [name, type, bytes] of [
      ['scan.png', 'image/png', makeTextImage(lines)],
      ['scan.jpg', 'image/jpeg', makeTextImage(lines, 'jpeg')],
      ['scan.tif', 'image/tiff', makeTextTiff(lines)],
    ] as const) {
      const { task, doc } = await ingest({ name, type, bytes });
      expect(task.status, `${name}: ${task.error}`).toBe('completed');
      expect(doc.content, name).toContain('Refunds take seven business days');
      expect(doc.ocr_pages).toBe(1);
      expect(doc.ocr_confidence).toBeGreaterThan(60);
    }
  });

  it('reads a scanned PDF page by OCR; a blank scan still fails with the clear message', async () => {
    const { task, doc } = await ingest({
      name: 'scanned.pdf',
      type: 'application/pdf',
      bytes: await makeScannedPdf(['Warranty covers the lens for two years']),
    });
    expect(task.status).toBe('completed');
    expect(doc.content).toContain('Warranty covers the lens for two years');
    expect(doc).toMatchObject({ ocr_pages: 1, language: 'en' });
    const blank = await ingest({ name: 'blank.pdf', type: 'application/pdf', bytes: await makeScannedPdf([]) });
    expect(blank.task.status).toBe('failed');
    expect(blank.task.error).toMatch(/No text could be extracted from the file, OCR included/);
  });
});

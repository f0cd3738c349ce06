/**
 * Real files of each type the knowledge base reads, built from the formats' own structure
 * (ECMA-376 for XLSX/PPTX, OASIS ODF 1.3 for ODT/ODS/ODP, RFC 5322/2045 for EML, RTF 1.9),
 * zipped with fflate, and images drawn with @napi-rs/canvas.
 */
import { createCanvas } from '@napi-rs/canvas';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${body}`;
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const zip = (files: Record<string, string>, stored: string[] = []): Uint8Array => {
  const entries: Zippable = {};
  for (const [name, text] of Object.entries(files))
    entries[name] = [strToU8(text), { level: stored.includes(name) ? 0 : 6 }];
  return zipSync(entries);
};

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

/** An XLSX workbook: each sheet's rows, strings shared (the first row) or inline (the others). */
export function makeXlsx(sheets: { name: string; rows: (string | number)[][] }[], options: { doctype?: string } = {}) {
  const shared: string[] = [];
  const files: Record<string, string> = {
    '[Content_Types].xml': xml(
      `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
    ),
    '_rels/.rels': xml(
      `<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
    'xl/workbook.xml': xml(
      `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${REL}"><sheets>${sheets
        .map((sheet, i) => `<sheet name="${esc(sheet.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
        .join('')}</sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': xml(
      `<Relationships xmlns="${PKG_REL}">${sheets
        .map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`)
        .join('')}<Relationship Id="rId99" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
  };
  sheets.forEach((sheet, i) => {
    const rows = sheet.rows
      .map((row, r) => {
        const cells = row
          .map((value, c) => {
            const ref = `${String.fromCharCode(65 + c)}${r + 1}`;
            if (typeof value === 'number') return `<c r="${ref}"><v>${value}</v></c>`;
            if (r === 0) {
              shared.push(value);
              return `<c r="${ref}" t="s"><v>${shared.length - 1}</v></c>`;
            }
            return `<c r="${ref}" t="inlineStr"><is><t>${esc(value)}</t></is></c>`;
          })
          .join('');
        return `<row r="${r + 1}">${cells}</row>`;
      })
      .join('');
    files[`xl/worksheets/sheet${i + 1}.xml`] = xml(
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`,
    );
  });
  files['xl/sharedStrings.xml'] =
    (options.doctype ?? '') +
    `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${shared.length}">${shared
      .map((text) => `<si><t>${text.startsWith('&') ? text : esc(text)}</t></si>`)
      .join('')}</sst>`;
  return zip(files);
}

const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const shape = (type: string | null, paragraphs: string[]) =>
  `<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>${type ? `<p:ph type="${type}"/>` : ''}</p:nvPr></p:nvSpPr><p:txBody><a:bodyPr/>${paragraphs
    .map((text) => `<a:p><a:r><a:t>${esc(text)}</a:t></a:r></a:p>`)
    .join('')}</p:txBody></p:sp>`;

/** A PPTX deck: each slide's title, body paragraphs and speaker notes. */
export function makePptx(slides: { title: string; body: string[]; notes?: string }[]) {
  const files: Record<string, string> = {
    '[Content_Types].xml': xml(
      `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>`,
    ),
    '_rels/.rels': xml(
      `<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
    ),
    'ppt/presentation.xml': xml(
      `<p:presentation xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"><p:sldIdLst>${slides
        .map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 10}"/>`)
        .join('')}</p:sldIdLst></p:presentation>`,
    ),
    'ppt/_rels/presentation.xml.rels': xml(
      `<Relationships xmlns="${PKG_REL}">${slides
        .map((_, i) => `<Relationship Id="rId${i + 10}" Type="${REL}/slide" Target="slides/slide${i + 1}.xml"/>`)
        .join('')}</Relationships>`,
    ),
  };
  slides.forEach((slide, i) => {
    files[`ppt/slides/slide${i + 1}.xml`] = xml(
      `<p:sld xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"><p:cSld><p:spTree>${shape('title', [slide.title])}${shape(null, slide.body)}${shape('sldNum', [String(i + 1)])}</p:spTree></p:cSld></p:sld>`,
    );
    if (slide.notes) {
      files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] = xml(
        `<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/notesSlide" Target="../notesSlides/notesSlide${i + 1}.xml"/></Relationships>`,
      );
      files[`ppt/notesSlides/notesSlide${i + 1}.xml`] = xml(
        `<p:notes xmlns:a="${A}" xmlns:r="${REL}" xmlns:p="${P}"><p:cSld><p:spTree>${shape('sldImg', [])}${shape('body', [slide.notes])}${shape('sldNum', [String(i + 1)])}</p:spTree></p:cSld></p:notes>`,
      );
    }
  });
  return zip(files);
}

const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" office:version="1.3"';

function odf(kind: 'text' | 'spreadsheet' | 'presentation', body: string, prolog = '') {
  const mime = `application/vnd.oasis.opendocument.${kind}`;
  return zip(
    {
      mimetype: mime,
      'content.xml': xml(
        `${prolog}<office:document-content ${ODF_NS}><office:body><office:${kind}>${body}</office:${kind}></office:body></office:document-content>`,
      ),
      'META-INF/manifest.xml': xml(
        `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="${mime}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`,
      ),
    },
    ['mimetype'],
  );
}

export type OdtPart = { h: string; level?: number } | { p: string } | { table: string[][] };

/** An ODT text: headings (outline levels), paragraphs and tables. */
export function makeOdt(parts: OdtPart[], prolog = '') {
  const body = parts
    .map((part) => {
      if ('h' in part) return `<text:h text:outline-level="${part.level ?? 1}">${esc(part.h)}</text:h>`;
      if ('p' in part)
        return `<text:p>${part.p.startsWith('&') ? part.p : esc(part.p).replace(/ {2}/g, ' <text:s/>')}</text:p>`;
      return `<table:table table:name="T">${part.table
        .map(
          (row) =>
            `<table:table-row>${row.map((cell) => `<table:table-cell><text:p>${esc(cell)}</text:p></table:table-cell>`).join('')}</table:table-row>`,
        )
        .join('')}</table:table>`;
    })
    .join('');
  return odf('text', body, prolog);
}

/** An ODS spreadsheet; `raw` rows are inserted as written (for repeat attributes). */
export function makeOds(sheets: { name: string; rows: (string | number)[][]; raw?: string }[]) {
  const body = sheets
    .map(
      (sheet) =>
        `<table:table table:name="${esc(sheet.name)}">${sheet.rows
          .map(
            (row) =>
              `<table:table-row>${row
                .map((cell) =>
                  typeof cell === 'number'
                    ? `<table:table-cell office:value-type="float" office:value="${cell}"><text:p>${cell}</text:p></table:table-cell>`
                    : `<table:table-cell office:value-type="string"><text:p>${esc(cell)}</text:p></table:table-cell>`,
                )
                .join('')}<table:table-cell table:number-columns-repeated="1020"/></table:table-row>`,
          )
          .join(
            '',
          )}${sheet.raw ?? ''}<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>`,
    )
    .join('');
  return odf('spreadsheet', body);
}

/** An ODP presentation: each slide's title, body and notes. */
export function makeOdp(slides: { title: string; body: string[]; notes?: string }[]) {
  const body = slides
    .map(
      (slide, i) =>
        `<draw:page draw:name="page${i + 1}"><draw:frame presentation:class="title"><draw:text-box><text:p>${esc(slide.title)}</text:p></draw:text-box></draw:frame><draw:frame presentation:class="outline"><draw:text-box>${slide.body
          .map((text) => `<text:p>${esc(text)}</text:p>`)
          .join('')}</draw:text-box></draw:frame>${
          slide.notes
            ? `<presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>${esc(slide.notes)}</text:p></draw:text-box></draw:frame></presentation:notes>`
            : ''
        }</draw:page>`,
    )
    .join('');
  return odf('presentation', body);
}

/** An RFC 5322 message, multipart/mixed: a text body and attachments (base64). */
export function makeEml(message: {
  from: string;
  to: string;
  subject: string;
  text: string;
  attachments: { name: string; type: string; content: string }[];
}) {
  const boundary = 'b1_mixed_boundary';
  const lines = [
    `From: ${message.from}`,
    `To: ${message.to}`,
    `Subject: ${message.subject}`,
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'Message-ID: <test-1@example.com>',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    message.text,
    ...message.attachments.flatMap((attachment) => [
      `--${boundary}`,
      `Content-Type: ${attachment.type}; name="${attachment.name}"`,
      `Content-Disposition: attachment; filename="${attachment.name}"`,
      'Content-Transfer-Encoding: base64',
      '',
      ...(Buffer.from(attachment.content)
        .toString('base64')
        .match(/.{1,76}/g) ?? []),
    ]),
    `--${boundary}--`,
    '',
  ];
  return strToU8(lines.join('\r\n'));
}

/** A PNG of lines of text, black on white, large enough for OCR. */
export function makeTextImage(lines: string[], format: 'png' | 'jpeg' = 'png'): Uint8Array {
  const canvas = createCanvas(1400, 120 + lines.length * 70);
  const context = canvas.getContext('2d');
  context.fillStyle = 'white';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = 'black';
  context.font = '44px sans-serif';
  lines.forEach((line, i) => context.fillText(line, 40, 90 + i * 70));
  return new Uint8Array(format === 'png' ? canvas.toBuffer('image/png') : canvas.toBuffer('image/jpeg', 95));
}

/** A baseline TIFF (uncompressed, 8-bit grey) of the same drawing: TIFF 6.0's minimum reader set. */
export function makeTextTiff(lines: string[]): Uint8Array {
  const canvas = createCanvas(1400, 120 + lines.length * 70);
  const context = canvas.getContext('2d');
  context.fillStyle = 'white';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = 'black';
  context.font = '44px sans-serif';
  lines.forEach((line, i) => context.fillText(line, 40, 90 + i * 70));
  const { width, height } = canvas;
  const rgba = context.getImageData(0, 0, width, height).data;
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++)
    pixels[i] = Math.round((rgba[i * 4]! + rgba[i * 4 + 1]! + rgba[i * 4 + 2]!) / 3);
  const entries: [number, number, number][] = [
    [256, 4, width], // ImageWidth
    [257, 4, height], // ImageLength
    [258, 3, 8], // BitsPerSample
    [259, 3, 1], // Compression: none
    [262, 3, 1], // PhotometricInterpretation: black is zero
    [273, 4, 0], // StripOffsets (set below)
    [277, 3, 1], // SamplesPerPixel
    [278, 4, height], // RowsPerStrip
    [279, 4, pixels.length], // StripByteCounts
  ];
  const ifdOffset = 8;
  const dataOffset = ifdOffset + 2 + entries.length * 12 + 4;
  const out = new Uint8Array(dataOffset + pixels.length);
  const view = new DataView(out.buffer);
  out.set([0x49, 0x49, 42, 0]);
  view.setUint32(4, ifdOffset, true);
  view.setUint16(ifdOffset, entries.length, true);
  entries.forEach(([tag, type, value], i) => {
    const at = ifdOffset + 2 + i * 12;
    view.setUint16(at, tag, true);
    view.setUint16(at + 2, type, true);
    view.setUint32(at + 4, 1, true);
    if (type === 3) view.setUint16(at + 8, value, true);
    else view.setUint32(at + 8, tag === 273 ? dataOffset : value, true);
  });
  view.setUint32(ifdOffset + 2 + entries.length * 12, 0, true);
  out.set(pixels, dataOffset);
  return out;
}

/** A PDF whose only page is a picture of text (a scan: no text layer). */
export async function makeScannedPdf(lines: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const image = await doc.embedPng(makeTextImage(lines));
  const page = doc.addPage([700, 60 + lines.length * 35 + 60]);
  page.drawImage(image, { x: 0, y: 0, width: 700, height: (700 * image.height) / image.width });
  return doc.save();
}

/** A PDF with text and a JavaScript action run on open (readers that run scripts would run it). */
export async function makePdfWithJavaScript(lines: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage();
  lines.forEach((line, i) => page.drawText(line, { x: 40, y: 780 - i * 16, size: 11, font }));
  const action = doc.context.obj({
    Type: 'Action',
    S: 'JavaScript',
    JS: PDFString.of('globalThis.__pdfScriptRan = true; app.alert("ran");'),
  });
  doc.catalog.set(PDFName.of('OpenAction'), doc.context.register(action));
  return doc.save();
}

/** A PDF of `pages` pages of text (a long manual). */
export async function makeLongPdf(pages: number, linesPerPage = 40): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage();
    for (let i = 0; i < linesPerPage; i++)
      page.drawText(
        `Page ${p + 1} line ${i + 1}: the device keeps its settings after a restart and a firmware update.`,
        {
          x: 30,
          y: 800 - i * 19,
          size: 9,
          font,
        },
      );
  }
  return doc.save();
}

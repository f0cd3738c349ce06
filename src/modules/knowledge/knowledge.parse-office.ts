/**
 * Office documents from their own structure: XLSX and ODS as tables (one per sheet, the first
 * row the header), PPTX and ODP as slides (title, text, speaker notes), ODT as headings,
 * paragraphs and tables. The zip is read within limits (knowledge.zip.ts); the XML by
 * htmlparser2 in XML mode, which expands no DTD entities (no "billion laughs", no external files).
 */
import { Parser } from 'htmlparser2';
import {
  IngestError,
  squash,
  tableFromRows,
  type Block,
  type ParsedDocument,
  type ProgressFn,
} from './knowledge.blocks.js';
import { readZip, zipText } from './knowledge.zip.js';

export const SHEET_LIMITS = {
  /** Cells with a value, over all sheets. */
  maxCells: 2_000_000,
  /** A repeat count of ODS rows or cells taken at most this far (empty repeats fill sheets to their edges). */
  maxRepeat: 1000,
  /** Columns of one row. */
  maxColumns: 2000,
  /** Sheets, slides. */
  maxUnits: 2000,
};

interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  close?(name: string): void;
  text?(text: string): void;
}

/** Streams `xml` through the handlers (element names as written, prefixes included). */
function walkXml(xml: string, handlers: XmlHandlers): void {
  const parser = new Parser(
    {
      onopentag: (name, attrs) => handlers.open?.(name, attrs),
      onclosetag: (name) => handlers.close?.(name),
      ontext: (text) => handlers.text?.(text),
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
}

function required(entries: Map<string, Uint8Array>, name: string, kind: string): string {
  const text = zipText(entries, name);
  if (text === undefined) throw new IngestError(`The file is not a readable ${kind} document: ${name} is missing`);
  return text;
}

/** Relationship id → target path, resolved against the folder of the part that owns them. */
function relationships(xml: string | undefined, folder: string): Map<string, { target: string; type: string }> {
  const out = new Map<string, { target: string; type: string }>();
  if (!xml) return out;
  walkXml(xml, {
    open(name, attrs) {
      if (name !== 'Relationship' || !attrs.Id || !attrs.Target || attrs.TargetMode === 'External') return;
      out.set(attrs.Id, { target: resolvePath(folder, attrs.Target), type: attrs.Type ?? '' });
    },
  });
  return out;
}

function resolvePath(folder: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `${folder}/${target}`).split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '..') out.pop();
    else if (part && part !== '.') out.push(part);
  }
  return out.join('/');
}

/** Column index of a cell reference (`B7` → 1). */
function columnIndex(ref: string | undefined): number | null {
  const letters = /^([A-Z]+)/.exec(ref ?? '')?.[1];
  if (!letters) return null;
  let index = 0;
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

// ---------------------------------------------------------------- XLSX

export function parseXlsx(bytes: Uint8Array, progress: ProgressFn): ParsedDocument {
  const entries = readZip(bytes, (name) => name.startsWith('xl/') && (name.endsWith('.xml') || name.endsWith('.rels')));
  const workbook = required(entries, 'xl/workbook.xml', 'XLSX');
  const rels = relationships(zipText(entries, 'xl/_rels/workbook.xml.rels'), 'xl');
  const sheets: { name: string; path: string }[] = [];
  walkXml(workbook, {
    open(name, attrs) {
      if (name !== 'sheet') return;
      const target = rels.get(attrs['r:id'] ?? '')?.target;
      if (target) sheets.push({ name: attrs.name ?? `Sheet${sheets.length + 1}`, path: target });
    },
  });
  if (sheets.length > SHEET_LIMITS.maxUnits)
    throw new IngestError(`The workbook has ${sheets.length} sheets; at most ${SHEET_LIMITS.maxUnits} are read`);
  const shared: string[] = [];
  const sharedXml = zipText(entries, 'xl/sharedStrings.xml');
  if (sharedXml) {
    let current: string[] | null = null;
    let inText = false;
    let phonetic = 0;
    walkXml(sharedXml, {
      open(name) {
        if (name === 'si') current = [];
        else if (name === 'rPh') phonetic++;
        else if (name === 't' && phonetic === 0) inText = true;
      },
      close(name) {
        if (name === 'si') {
          shared.push((current ?? []).join(''));
          current = null;
        } else if (name === 'rPh') phonetic--;
        else if (name === 't') inText = false;
      },
      text(text) {
        if (inText && current) current.push(text);
      },
    });
  }
  const blocks: Block[] = [];
  let cells = 0;
  sheets.forEach((sheet, index) => {
    progress('parsing', index, sheets.length);
    const xml = zipText(entries, sheet.path);
    if (xml === undefined) return;
    const rows: string[][] = [];
    let row: string[] | null = null;
    let cell: { column: number; type: string; value: string[] } | null = null;
    let capture = false;
    let nextColumn = 0;
    walkXml(xml, {
      open(name, attrs) {
        // Rows left out of the file are empty: the first row with values is the header either way.
        if (name === 'row') {
          row = [];
          nextColumn = 0;
        } else if (name === 'c' && row) {
          const column = columnIndex(attrs.r) ?? nextColumn;
          if (column >= SHEET_LIMITS.maxColumns)
            throw new IngestError(
              `Sheet ${sheet.name} has a cell in column ${column + 1}; at most ${SHEET_LIMITS.maxColumns} columns are read`,
            );
          cell = { column, type: attrs.t ?? 'n', value: [] };
          nextColumn = column + 1;
        } else if (cell && (name === 'v' || name === 't')) capture = true;
      },
      close(name) {
        if (name === 'v' || name === 't') capture = false;
        else if (name === 'c' && cell && row) {
          const raw = cell.value.join('');
          const value =
            cell.type === 's'
              ? (shared[Number(raw)] ?? '')
              : cell.type === 'b'
                ? raw === '1'
                  ? 'TRUE'
                  : 'FALSE'
                : raw;
          if (value.trim()) {
            if (++cells > SHEET_LIMITS.maxCells)
              throw new IngestError(`The workbook has more than ${SHEET_LIMITS.maxCells} cells with values; split it`);
            while (row.length < cell.column) row.push('');
            row[cell.column] = value;
          }
          cell = null;
        } else if (name === 'row' && row) {
          rows.push(row);
          row = null;
        }
      },
      text(text) {
        if (capture && cell) cell.value.push(text);
      },
    });
    const table = tableFromRows(rows, sheet.name);
    if (table) blocks.push(table);
  });
  progress('parsing', sheets.length, sheets.length);
  return { blocks, units: sheets.length };
}

// ---------------------------------------------------------------- PPTX

/** The paragraphs of one slide or notes part, the title apart; placeholders of `skip` types left out. */
function slideText(xml: string, skip: Set<string>): { title: string; paragraphs: string[] } {
  const paragraphs: string[] = [];
  const titles: string[] = [];
  let shapeType: string | null = null;
  let inShape = 0;
  let paragraph: string[] | null = null;
  let inText = false;
  walkXml(xml, {
    open(name, attrs) {
      if (name === 'p:sp') {
        inShape++;
        shapeType = null;
      } else if (name === 'p:ph') shapeType = attrs.type ?? 'body';
      else if (name === 'a:p') paragraph = [];
      else if (name === 'a:t') inText = true;
      else if (name === 'a:br' && paragraph) paragraph.push('\n');
    },
    close(name) {
      if (name === 'a:t') inText = false;
      else if (name === 'a:p' && paragraph) {
        const text = squash(paragraph.join(''));
        if (text && !(shapeType && skip.has(shapeType))) {
          if (inShape && (shapeType === 'title' || shapeType === 'ctrTitle')) titles.push(text);
          else paragraphs.push(text);
        }
        paragraph = null;
      } else if (name === 'p:sp') {
        inShape--;
        shapeType = null;
      }
    },
    text(text) {
      if (inText && paragraph) paragraph.push(text);
    },
  });
  return { title: titles.join(' '), paragraphs };
}

export function parsePptx(bytes: Uint8Array, progress: ProgressFn): ParsedDocument {
  const entries = readZip(
    bytes,
    (name) => name.startsWith('ppt/') && (name.endsWith('.xml') || name.endsWith('.rels')),
  );
  const presentation = required(entries, 'ppt/presentation.xml', 'PPTX');
  const rels = relationships(zipText(entries, 'ppt/_rels/presentation.xml.rels'), 'ppt');
  const slides: string[] = [];
  walkXml(presentation, {
    open(name, attrs) {
      if (name !== 'p:sldId') return;
      const target = rels.get(attrs['r:id'] ?? '')?.target;
      if (target) slides.push(target);
    },
  });
  if (slides.length > SHEET_LIMITS.maxUnits)
    throw new IngestError(`The presentation has ${slides.length} slides; at most ${SHEET_LIMITS.maxUnits} are read`);
  const blocks: Block[] = [];
  slides.forEach((path, index) => {
    progress('parsing', index, slides.length);
    const xml = zipText(entries, path);
    if (xml === undefined) return;
    const slide = slideText(xml, new Set(['sldNum', 'dt', 'ftr']));
    const folder = path.slice(0, path.lastIndexOf('/'));
    const file = path.slice(path.lastIndexOf('/') + 1);
    const slideRels = relationships(zipText(entries, `${folder}/_rels/${file}.rels`), folder);
    const notesPath = [...slideRels.values()].find((rel) => rel.type.endsWith('/notesSlide'))?.target;
    const notesXml = notesPath ? zipText(entries, notesPath) : undefined;
    // The notes page repeats the slide's image and number; its body placeholder holds the notes.
    const notes = notesXml ? slideText(notesXml, new Set(['sldNum', 'sldImg', 'dt', 'ftr', 'hdr'])) : null;
    pushSlide(
      blocks,
      index + 1,
      slide.title,
      slide.paragraphs,
      notes ? [notes.title, ...notes.paragraphs].filter(Boolean) : [],
    );
  });
  progress('parsing', slides.length, slides.length);
  return { blocks, units: slides.length };
}

function pushSlide(blocks: Block[], number: number, title: string, paragraphs: string[], notes: string[]) {
  if (!title && paragraphs.length === 0 && notes.length === 0) return;
  blocks.push({ kind: 'heading', level: 1, text: title ? `Slide ${number}: ${title}` : `Slide ${number}` });
  if (paragraphs.length) blocks.push({ kind: 'text', text: paragraphs.join('\n') });
  if (notes.length) blocks.push({ kind: 'text', text: `Speaker notes: ${notes.join('\n')}` });
}

// ---------------------------------------------------------------- ODF (ODT, ODS, ODP)

const ODF_TYPES = {
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
} as const;

function odfContent(bytes: Uint8Array, kind: keyof typeof ODF_TYPES): string {
  const entries = readZip(bytes, (name) => name === 'content.xml' || name === 'mimetype');
  const mimetype = zipText(entries, 'mimetype')?.trim();
  if (mimetype && mimetype !== ODF_TYPES[kind] && !mimetype.startsWith(`${ODF_TYPES[kind]}-`))
    throw new IngestError(
      `The file is not a readable ${kind.toUpperCase()} document: its type is ${mimetype.slice(0, 80)}`,
    );
  return required(entries, 'content.xml', kind.toUpperCase());
}

/**
 * Collects the text of ODF paragraphs: `text:s` (spaces), `text:tab`, `text:line-break` as
 * whitespace; notes' citations and bodies left out of the running text.
 */
class OdfText {
  private parts: string[] | null = null;
  private skip = 0;
  begin() {
    this.parts = [];
  }
  get active() {
    return this.parts !== null;
  }
  open(name: string, attrs: Record<string, string>) {
    if (!this.parts) return;
    if (name === 'text:note' || name === 'office:annotation') this.skip++;
    else if (name === 'text:s') this.parts.push(' '.repeat(Math.min(Number(attrs['text:c'] ?? 1) || 1, 100)));
    else if (name === 'text:tab' || name === 'text:line-break') this.parts.push(' ');
  }
  close(name: string) {
    if (name === 'text:note' || name === 'office:annotation') this.skip--;
  }
  text(text: string) {
    if (this.parts && this.skip === 0) this.parts.push(text);
  }
  end(): string {
    const out = squash((this.parts ?? []).join(''));
    this.parts = null;
    return out;
  }
}

export function parseOdt(bytes: Uint8Array, progress: ProgressFn): ParsedDocument {
  const xml = odfContent(bytes, 'odt');
  progress('parsing', 0, 1);
  const blocks: Block[] = [];
  const text = new OdfText();
  let heading = 0;
  let paragraphs: string[] = [];
  // Tables: rows of cells; a cell's paragraphs joined.
  const tables: { rows: string[][]; row: string[] | null; cell: string[] | null }[] = [];
  const flush = () => {
    if (paragraphs.length) blocks.push({ kind: 'text', text: paragraphs.join('\n') });
    paragraphs = [];
  };
  walkXml(xml, {
    open(name, attrs) {
      const table = tables.at(-1);
      if (name === 'table:table') {
        flush();
        tables.push({ rows: [], row: null, cell: null });
      } else if (name === 'table:table-row' && table) table.row = [];
      else if (name === 'table:table-cell' && table) table.cell = [];
      else if ((name === 'text:p' || name === 'text:h') && !text.active) {
        heading = name === 'text:h' ? Math.min(Math.max(Number(attrs['text:outline-level'] ?? 1) || 1, 1), 6) : 0;
        text.begin();
      } else text.open(name, attrs);
    },
    close(name) {
      const table = tables.at(-1);
      if ((name === 'text:p' || name === 'text:h') && text.active) {
        const line = text.end();
        if (!line) return;
        if (table?.cell) table.cell.push(line);
        else if (heading) {
          flush();
          blocks.push({ kind: 'heading', level: heading, text: line });
        } else paragraphs.push(line);
      } else if (name === 'table:table-cell' && table?.cell && table.row) {
        table.row.push(table.cell.join(' '));
        table.cell = null;
      } else if (name === 'table:table-row' && table?.row) {
        table.rows.push(table.row);
        table.row = null;
      } else if (name === 'table:table') {
        const done = tables.pop()!;
        const block = tableFromRows(done.rows);
        if (block) blocks.push(block);
      } else text.close(name);
    },
    text: (value) => text.text(value),
  });
  flush();
  progress('parsing', 1, 1);
  return { blocks, units: 1 };
}

export function parseOds(bytes: Uint8Array, progress: ProgressFn): ParsedDocument {
  const xml = odfContent(bytes, 'ods');
  const blocks: Block[] = [];
  const text = new OdfText();
  let sheet: { name: string; rows: string[][] } | null = null;
  let row: string[] | null = null;
  let rowRepeat = 1;
  let cell: { parts: string[]; repeat: number; value: string | null } | null = null;
  let sheets = 0;
  let cells = 0;
  walkXml(xml, {
    open(name, attrs) {
      if (name === 'table:table') {
        if (++sheets > SHEET_LIMITS.maxUnits)
          throw new IngestError(`The spreadsheet has more than ${SHEET_LIMITS.maxUnits} sheets`);
        progress('parsing', sheets - 1, null);
        sheet = { name: attrs['table:name'] ?? `Sheet${sheets}`, rows: [] };
      } else if (name === 'table:table-row' && sheet) {
        row = [];
        rowRepeat = Math.max(Number(attrs['table:number-rows-repeated'] ?? 1) || 1, 1);
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row) {
        const value =
          attrs['office:value-type'] === 'float' || attrs['office:value-type'] === 'percentage'
            ? (attrs['office:value'] ?? null)
            : null;
        cell = { parts: [], repeat: Math.max(Number(attrs['table:number-columns-repeated'] ?? 1) || 1, 1), value };
      } else if (name === 'text:p' && cell) {
        if (cell.parts.length) cell.parts.push(' ');
        text.begin();
      } else text.open(name, attrs);
    },
    close(name) {
      if (name === 'text:p' && cell && text.active) cell.parts.push(text.end());
      else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell && row) {
        const value = squash(cell.parts.join('')) || cell.value || '';
        // Empty repeated cells pad a row to the sheet's edge: only filled ones are expanded.
        const repeat = value
          ? Math.min(cell.repeat, SHEET_LIMITS.maxRepeat)
          : Math.min(cell.repeat, SHEET_LIMITS.maxColumns);
        if (value) {
          cells += repeat;
          if (cells > SHEET_LIMITS.maxCells)
            throw new IngestError(`The spreadsheet has more than ${SHEET_LIMITS.maxCells} cells with values; split it`);
        }
        for (let i = 0; i < repeat && row.length < SHEET_LIMITS.maxColumns; i++) row.push(value);
        cell = null;
      } else if (name === 'table:table-row' && row && sheet) {
        const filled = row.some((value) => value);
        const repeat = filled ? Math.min(rowRepeat, SHEET_LIMITS.maxRepeat) : Math.min(rowRepeat, 1);
        if (filled) {
          cells += row.filter(Boolean).length * (repeat - 1);
          if (cells > SHEET_LIMITS.maxCells)
            throw new IngestError(`The spreadsheet has more than ${SHEET_LIMITS.maxCells} cells with values; split it`);
        }
        for (let i = 0; i < repeat; i++) sheet.rows.push(row);
        row = null;
      } else if (name === 'table:table' && sheet) {
        const table = tableFromRows(sheet.rows, sheet.name);
        if (table) blocks.push(table);
        sheet = null;
      } else text.close(name);
    },
    text: (value) => text.text(value),
  });
  progress('parsing', sheets, sheets);
  return { blocks, units: sheets };
}

export function parseOdp(bytes: Uint8Array, progress: ProgressFn): ParsedDocument {
  const xml = odfContent(bytes, 'odp');
  const blocks: Block[] = [];
  const text = new OdfText();
  let page: { number: number; title: string[]; body: string[]; notes: string[] } | null = null;
  let frameClass: string | null = null;
  let inNotes = 0;
  let pages = 0;
  walkXml(xml, {
    open(name, attrs) {
      if (name === 'draw:page') {
        if (++pages > SHEET_LIMITS.maxUnits)
          throw new IngestError(`The presentation has more than ${SHEET_LIMITS.maxUnits} slides`);
        progress('parsing', pages - 1, null);
        page = { number: pages, title: [], body: [], notes: [] };
      } else if (name === 'presentation:notes') inNotes++;
      else if (name === 'draw:frame') frameClass = attrs['presentation:class'] ?? null;
      else if ((name === 'text:p' || name === 'text:h') && page && !text.active) text.begin();
      else text.open(name, attrs);
    },
    close(name) {
      if ((name === 'text:p' || name === 'text:h') && page && text.active) {
        const line = text.end();
        if (!line) return;
        if (inNotes) {
          if (frameClass !== 'page-number' && frameClass !== 'page') page.notes.push(line);
        } else if (frameClass === 'title') page.title.push(line);
        else if (frameClass !== 'page-number' && frameClass !== 'date-time' && frameClass !== 'footer')
          page.body.push(line);
      } else if (name === 'draw:frame') frameClass = null;
      else if (name === 'presentation:notes') inNotes--;
      else if (name === 'draw:page' && page) {
        pushSlide(blocks, page.number, page.title.join(' '), page.body, page.notes);
        page = null;
      } else text.close(name);
    },
    text: (value) => text.text(value),
  });
  progress('parsing', pages, pages);
  return { blocks, units: pages };
}

/**
 * A small, safe Markdown renderer: the answer's text becomes Preact elements (never HTML
 * strings, so nothing in an answer can inject markup or script). Paragraphs, headings, lists,
 * fenced code, quotes; bold, italic, inline code, links (http, https and mailto only) and the
 * answer's citation markers `[n]`, shown as links to the cited document.
 */
import type { ComponentChildren, VNode } from 'preact';
import type { Citation } from './api';

const SAFE_URL = /^(https?:\/\/|mailto:)/i;

export function safeUrl(url: string): string | null {
  const trimmed = url.trim();
  return SAFE_URL.test(trimmed) ? trimmed : null;
}

function citationLink(n: number, citations: readonly Citation[], key: number): VNode | string {
  const citation = citations[n - 1];
  if (!citation) return `[${n}]`;
  const url = citation.url ? safeUrl(citation.url) : null;
  const label = `${n}`;
  return url ? (
    <a key={key} class="cite" href={url} target="_blank" rel="noopener noreferrer" title={citation.title}>
      {label}
    </a>
  ) : (
    <span key={key} class="cite" title={citation.title}>
      {label}
    </span>
  );
}

const INLINE =
  /(`[^`\n]+`)|(\*\*[^*\n]+\*\*|__[^_\n]+__)|(\*[^*\s][^*\n]*\*|_[^_\s][^_\n]*_)|(\[[^\]\n]+\]\([^)\s]+\))|(\[\d{1,2}\](?:\[\d{1,2}\])*)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;

/** Inline Markdown of one line or paragraph. */
export function inline(text: string, citations: readonly Citation[]): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let rest = text;
  let key = 0;
  while (rest) {
    const match = INLINE.exec(rest);
    if (!match) {
      out.push(rest);
      break;
    }
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const [whole, code, bold, italic, link, cite, bare] = match;
    if (code) out.push(<code key={key++}>{code.slice(1, -1)}</code>);
    else if (bold) out.push(<strong key={key++}>{inline(bold.slice(2, -2), citations)}</strong>);
    else if (italic) out.push(<em key={key++}>{inline(italic.slice(1, -1), citations)}</em>);
    else if (link) {
      const split = link.indexOf('](');
      const label = link.slice(1, split);
      const url = safeUrl(link.slice(split + 2, -1));
      out.push(
        url ? (
          <a key={key++} href={url} target="_blank" rel="noopener noreferrer">
            {inline(label, citations)}
          </a>
        ) : (
          label
        ),
      );
    } else if (cite) {
      for (const n of cite.match(/\d+/g) ?? []) out.push(citationLink(Number(n), citations, key++));
    } else if (bare) {
      out.push(
        <a key={key++} href={bare} target="_blank" rel="noopener noreferrer">
          {bare}
        </a>,
      );
    }
    rest = rest.slice(match.index + whole!.length);
  }
  return out;
}

const withBreaks = (lines: string[], citations: readonly Citation[]) =>
  lines.flatMap((line, index) =>
    index ? [<br key={`b${index}`} />, ...inline(line, citations)] : inline(line, citations),
  );

/** The blocks of a Markdown text. */
export function Markdown({ text, citations = [] }: { text: string; citations?: readonly Citation[] }) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: VNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      continue;
    }
    const key = blocks.length;
    if (/^\s*```/.test(line)) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```/.test(lines[i]!)) code.push(lines[i++]!);
      i++;
      blocks.push(
        <pre key={key}>
          <code>{code.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push(
        <p key={key} class="h">
          <strong>{inline(heading[2]!, citations)}</strong>
        </p>,
      );
      i++;
      continue;
    }
    const item = /^\s*([-*+]|\d{1,3}[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      while (i < lines.length && item.test(lines[i]!)) {
        items.push(lines[i]!.replace(item, ''));
        i++;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]!) && !item.test(lines[i]!))
          items[items.length - 1] += ` ${lines[i++]!.trim()}`;
      }
      const children = items.map((entry, n) => <li key={n}>{inline(entry, citations)}</li>);
      blocks.push(ordered ? <ol key={key}>{children}</ol> : <ul key={key}>{children}</ul>);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s*>\s?/, ''));
      blocks.push(<blockquote key={key}>{withBreaks(quoted, citations)}</blockquote>);
      continue;
    }
    const paragraph: string[] = [];
    while (
      i < lines.length &&
      lines[i]!.trim() &&
      !/^\s*```/.test(lines[i]!) &&
      !/^#{1,6}\s/.test(lines[i]!) &&
      !item.test(lines[i]!) &&
      !/^\s*>/.test(lines[i]!)
    )
      paragraph.push(lines[i++]!);
    blocks.push(<p key={key}>{withBreaks(paragraph, citations)}</p>);
  }
  return <>{blocks}</>;
}

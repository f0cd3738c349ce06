/**
 * An agent's answer as each vendor shows it: the model writes Markdown; Slack reads mrkdwn
 * (`*bold*`, `_italic_`, `~strike~`, `<url|text>`, `&<>` escaped), WhatsApp its own marks
 * (`*bold*`, `_italic_`, `~strike~`, links as plain URLs), Teams Markdown itself. Citations
 * become a "Sources" list of links (a document's source URL when it has one, else its title).
 * Long answers are split where each vendor needs it: WhatsApp 4,096 characters a message, Slack
 * section blocks of 3,000 characters (ten to a message), Teams 16,000 characters a message —
 * at a paragraph, else a line, else a space.
 */
import type { ChannelName } from './channels.tables.js';

export const WHATSAPP_MAX_TEXT = 4096;
export const SLACK_MAX_SECTION = 3000;
export const SLACK_SECTIONS_PER_MESSAGE = 10;
export const TEAMS_MAX_TEXT = 16_000;

export interface Source {
  title: string;
  url: string | null;
}

/** One message to send: its text in the vendor's format, and (Slack) its blocks. */
export interface OutgoingMessage {
  text: string;
  blocks?: Record<string, unknown>[];
}

/** Applies `convert` to the text outside code fences and inline code, keeping the code as written. */
function outsideCode(markdown: string, convert: (text: string) => string, code: (text: string) => string = (t) => t) {
  let out = '';
  let last = 0;
  const pattern = /```[\s\S]*?(?:```|$)|`[^`\n]+`/g;
  for (let match = pattern.exec(markdown); match; match = pattern.exec(markdown)) {
    out += convert(markdown.slice(last, match.index)) + code(match[0]);
    last = match.index + match[0].length;
  }
  return out + convert(markdown.slice(last));
}

/** Bold, italic, strike and headings to single-character marks (`*`, `_`, `~`), as Slack and WhatsApp read them. */
function marks(text: string): string {
  const BOLD = '\u0001';
  return text
    .replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm, `${BOLD}$1${BOLD}`)
    .replace(
      /\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__/g,
      (_m, a: string, b: string) => `${BOLD}${a ?? b}${BOLD}`,
    )
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, '$1_$2_')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '~$1~')
    .replace(/^([ \t]*)[-*+][ \t]+/gm, '$1• ')
    .replaceAll(BOLD, '*');
}

const escapeSlack = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Markdown → Slack mrkdwn. */
export function toSlackMrkdwn(markdown: string): string {
  return outsideCode(
    markdown,
    (text) => {
      const links: string[] = [];
      const held = text.replace(/!?\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, label: string, url: string) => {
        links.push(`<${url.replace(/[<>|]/g, '')}|${escapeSlack(label).replace(/\|/g, '¦')}>`);
        return `\u0002${links.length - 1}\u0002`;
      });
      // eslint-disable-next-line no-control-regex -- the placeholder is a control character no text holds
      return marks(escapeSlack(held)).replace(/\u0002(\d+)\u0002/g, (_m, i: string) => links[Number(i)]!);
    },
    (code) => escapeSlack(code),
  );
}

/** Markdown → WhatsApp's formatting. */
export function toWhatsappText(markdown: string): string {
  return outsideCode(markdown, (text) =>
    marks(
      text.replace(/!?\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, label: string, url: string) =>
        label === url ? url : `${label} (${url})`,
      ),
    ),
  );
}

/** Splits `text` into pieces of at most `limit` characters: at a paragraph, else a line, else a space. */
export function splitText(text: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf('\n\n');
    if (cut < limit / 2) cut = window.lastIndexOf('\n');
    if (cut < limit / 2) cut = window.lastIndexOf(' ');
    if (cut < limit / 2) cut = limit;
    // Never between the two halves of a surrogate pair.
    if (/[\uD800-\uDBFF]/.test(rest.charAt(cut - 1))) cut -= 1;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

function sourcesMarkdown(sources: readonly Source[]): string {
  if (!sources.length) return '';
  const lines = sources.map((source) => (source.url ? `- [${source.title}](${source.url})` : `- ${source.title}`));
  return `\n\n**Sources**\n${lines.join('\n')}`;
}

function sourcesWhatsapp(sources: readonly Source[]): string {
  if (!sources.length) return '';
  const lines = sources.map((source) => (source.url ? `- ${source.title}: ${source.url}` : `- ${source.title}`));
  return `\n\n*Sources*\n${lines.join('\n')}`;
}

/** The messages that carry `answer` (Markdown) and its sources on `channel`, in order. */
export function renderAnswer(channel: ChannelName, answer: string, sources: readonly Source[] = []): OutgoingMessage[] {
  switch (channel) {
    case 'whatsapp':
      return splitText(toWhatsappText(answer) + sourcesWhatsapp(sources), WHATSAPP_MAX_TEXT).map((text) => ({ text }));
    case 'teams':
      return splitText(answer + sourcesMarkdown(sources), TEAMS_MAX_TEXT).map((text) => ({ text }));
    case 'slack': {
      const sections = splitText(toSlackMrkdwn(answer + sourcesMarkdown(sources)), SLACK_MAX_SECTION);
      const messages: OutgoingMessage[] = [];
      for (let i = 0; i < sections.length; i += SLACK_SECTIONS_PER_MESSAGE) {
        const group = sections.slice(i, i + SLACK_SECTIONS_PER_MESSAGE);
        const preview = group[0]!;
        messages.push({
          // The notification text (blocks are what Slack shows).
          text: preview.length > 300 ? `${preview.slice(0, 299)}…` : preview,
          blocks: group.map((section) => ({ type: 'section', text: { type: 'mrkdwn', text: section } })),
        });
      }
      return messages;
    }
  }
}

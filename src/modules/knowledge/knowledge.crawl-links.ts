/**
 * What a crawler reads of a page (in the CPU pool: knowledge.parse.job.ts): its links made
 * absolute (http(s) only, fragments dropped, `<base href>` honoured), its title, and the robots
 * directives of its `<meta name="robots">` (noindex: not kept; nofollow: links not followed).
 * Also the page URLs of a sitemap (`<urlset>`) or a sitemap index (`<sitemapindex>`).
 */
import { Parser } from 'htmlparser2';

export interface PageLinks {
  links: string[];
  title: string;
  noindex: boolean;
  nofollow: boolean;
}

/** At most this many links are read of one page. */
const MAX_LINKS = 5000;

/** A URL without its fragment, or null when it is not http(s). */
export function normalizeUrl(raw: string, base?: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  url.hash = '';
  return url.href;
}

export function readPageLinks(html: string, pageUrl: string): PageLinks {
  let base = pageUrl;
  const links = new Set<string>();
  let title = '';
  let inTitle = false;
  let noindex = false;
  let nofollow = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'base' && attributes.href) base = normalizeUrl(attributes.href, pageUrl) ?? base;
        else if (name === 'title') inTitle = true;
        else if (name === 'meta' && attributes.name?.toLowerCase() === 'robots') {
          const content = (attributes.content ?? '').toLowerCase();
          noindex ||= /\b(noindex|none)\b/.test(content);
          nofollow ||= /\b(nofollow|none)\b/.test(content);
        } else if ((name === 'a' || name === 'area') && attributes.href && links.size < MAX_LINKS) {
          if (/\bnofollow\b/i.test(attributes.rel ?? '')) return;
          const url = normalizeUrl(attributes.href, base);
          if (url) links.add(url);
        }
      },
      ontext(text) {
        if (inTitle && title.length < 500) title += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(html);
  return { links: nofollow ? [] : [...links], title: title.replace(/\s+/g, ' ').trim(), noindex, nofollow };
}

/** The `<loc>` entries of a sitemap: pages, or (in a sitemap index) other sitemaps. */
export function readSitemap(xml: string, sitemapUrl: string): { pages: string[]; sitemaps: string[] } {
  const pages: string[] = [];
  const sitemaps: string[] = [];
  const stack: string[] = [];
  let loc = '';
  const parser = new Parser(
    {
      onopentag(name) {
        stack.push(name.replace(/^.*:/, ''));
        if (stack.at(-1) === 'loc') loc = '';
      },
      ontext(text) {
        if (stack.at(-1) === 'loc' && loc.length < 4096) loc += text;
      },
      onclosetag() {
        const name = stack.pop();
        if (name !== 'loc') return;
        const url = normalizeUrl(loc, sitemapUrl);
        if (!url) return;
        const parent = stack.at(-1);
        if (parent === 'sitemap') sitemaps.push(url);
        else if (parent === 'url' && pages.length < 50_000) pages.push(url);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return { pages, sitemaps };
}

import { describe, expect, it } from 'vitest';
import { renderAnswer, splitText, toSlackMrkdwn, toWhatsappText } from './channels.format.js';
import { serviceHostAllowed, verifyMetaSignature, verifySlackSignature } from './channels.verify.js';
import { createHmac } from 'node:crypto';

describe('Markdown for vendors', () => {
  it('renders Slack mrkdwn: bold, italic, strike, headings, lists, links, escapes; code kept', () => {
    expect(toSlackMrkdwn('# Title\n**bold** and *it* ~~gone~~\n- one\n[site](https://a.example/x?y=1) 1 < 2 & 3')).toBe(
      '*Title*\n*bold* and _it_ ~gone~\n• one\n<https://a.example/x?y=1|site> 1 &lt; 2 &amp; 3',
    );
    expect(toSlackMrkdwn('use `a**b**` and\n```\nx < y\n```')).toBe('use `a**b**` and\n```\nx &lt; y\n```');
  });

  it('renders WhatsApp marks with links as plain URLs', () => {
    expect(toWhatsappText('**Order** _shipped_ [track](https://t.example/1)')).toBe(
      '*Order* _shipped_ track (https://t.example/1)',
    );
  });

  it('splits at paragraphs, then lines, then spaces, never over the limit', () => {
    const text = `${'a'.repeat(30)}\n\n${'b '.repeat(40)}`;
    const parts = splitText(text, 40);
    expect(parts.every((part) => part.length <= 40)).toBe(true);
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' ').trim());
    expect(splitText('x'.repeat(100), 30).map((p) => p.length)).toEqual([30, 30, 30, 10]);
  });

  it('lists citations as links where the document has a source URL', () => {
    const [slack] = renderAnswer('slack', 'Answer.', [
      { title: 'Returns', url: 'https://shop.example/returns' },
      { title: 'FAQ', url: null },
    ]);
    expect(slack!.blocks![0]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: 'Answer.\n\n*Sources*\n• <https://shop.example/returns|Returns>\n• FAQ' },
    });
    expect(renderAnswer('teams', 'A.', [{ title: 'T', url: 'https://x.example' }])[0]!.text).toBe(
      'A.\n\n**Sources**\n- [T](https://x.example)',
    );
  });
});

describe('signatures and hosts', () => {
  const body = Buffer.from('{"type":"event_callback"}');
  it('checks Slack v0 signatures and the five-minute window', () => {
    const ts = 1_700_000_000;
    const sig = `v0=${createHmac('sha256', 'secret').update(`v0:${ts}:${body.toString()}`).digest('hex')}`;
    const headers = { 'x-slack-signature': sig, 'x-slack-request-timestamp': String(ts) };
    expect(verifySlackSignature('secret', headers, body, ts + 299)).toEqual({ ok: true });
    expect(verifySlackSignature('secret', headers, body, ts + 301).ok).toBe(false);
    expect(verifySlackSignature('other', headers, body, ts).ok).toBe(false);
  });

  it("checks Meta's sha256 signature", () => {
    const sig = `sha256=${createHmac('sha256', 'app').update(body).digest('hex')}`;
    expect(verifyMetaSignature('app', { 'x-hub-signature-256': sig }, body)).toEqual({ ok: true });
    expect(verifyMetaSignature('app', { 'x-hub-signature-256': sig.toUpperCase() }, body).ok).toBe(false);
  });

  it('allows service hosts by name, host:port and *.domain', () => {
    const hosts = ['smba.trafficmanager.net', '*.botframework.com', '127.0.0.1:3978'];
    expect(serviceHostAllowed('https://smba.trafficmanager.net/amer/', hosts)).toBe(true);
    expect(serviceHostAllowed('https://webchat.botframework.com/', hosts)).toBe(true);
    expect(serviceHostAllowed('https://botframework.com.evil.example/', hosts)).toBe(false);
    expect(serviceHostAllowed('http://127.0.0.1:3978/', hosts)).toBe(true);
    expect(serviceHostAllowed('http://127.0.0.1:9999/', hosts)).toBe(false);
    expect(serviceHostAllowed('https://smba.trafficmanager.net:8443/', hosts)).toBe(false);
  });
});

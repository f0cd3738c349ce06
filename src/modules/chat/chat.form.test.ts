import { describe, expect, it } from 'vitest';
import { AppError } from '../../http/errors.js';
import { parseChatForm } from './chat.form.js';

/** The bytes and content-type a client sends for `form`. */
async function encode(form: FormData) {
  const response = new Response(form);
  return { body: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type')! };
}

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { status: error.statusCode, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}

describe('parseChatForm', () => {
  it('reads text fields (UTF-8) and the audio file', async () => {
    const form = new FormData();
    form.set('agent_key', 'agent:x:web:us-east');
    form.set('query', 'كيف أسترجع المبلغ؟ — “refund”');
    form.set('audio', new Blob([new Uint8Array([1, 2, 3])], { type: 'audio/wav' }), 'hello.wav');
    const { body, contentType } = await encode(form);
    expect(parseChatForm(body, contentType, 1024)).toEqual({
      agent_key: 'agent:x:web:us-east',
      query: 'كيف أسترجع المبلغ؟ — “refund”',
      audio: { buffer: Buffer.from([1, 2, 3]), filename: 'hello.wav', mimetype: 'audio/wav' },
    });
  });

  it('refuses repeated fields, other files, large audio, too many parts and unreadable bodies', async () => {
    const twice = new FormData();
    twice.append('query', 'a');
    twice.append('query', 'b');
    const file = new FormData();
    file.set('attachment', new Blob(['x']), 'x.txt');
    const large = new FormData();
    large.set('audio', new Blob([new Uint8Array(2048)]), 'big.wav');
    const many = new FormData();
    for (let i = 0; i < 31; i++) many.set(`f${i}`, 'x');
    const cases: [FormData, number, RegExp][] = [
      [twice, 400, /'query': given more than once/],
      [file, 400, /'attachment': only 'audio' may be a file/],
      [large, 413, /larger than 1024 bytes/],
      [many, 400, /could not be read/],
    ];
    for (const [form, status, message] of cases) {
      const { body, contentType } = await encode(form);
      const refused = refusal(() => parseChatForm(body, contentType, 1024));
      expect(refused.status).toBe(status);
      expect(refused.message).toMatch(message);
    }
    expect(refusal(() => parseChatForm(Buffer.from('x'), 'multipart/form-data', 1024)).message).toMatch(/no boundary/);
    expect(
      refusal(() =>
        parseChatForm(
          Buffer.from('--b\r\ncontent-disposition: form-data; name="q"\r\n\r\nunterminated'),
          'multipart/form-data; boundary=b',
          1024,
        ),
      ),
    ).toMatchObject({ status: 400 });
  });
});

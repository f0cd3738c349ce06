import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

function parse(chunks: (string | Buffer)[], end = true): [string, string][] {
  const events: [string, string][] = [];
  const parser = new SseParser((event, data) => events.push([event, data]));
  for (const chunk of chunks) parser.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  if (end) parser.end();
  return events;
}

describe('SseParser', () => {
  it('reads events with their type, data lines joined, comments and other fields ignored', () => {
    expect(
      parse([
        ': a comment\n',
        'event: message_start\ndata: {"a":1}\n\n',
        'id: 7\nretry: 100\ndata: one\ndata:two\ndata\n\n',
        'data: {"b":2}\n\n',
      ]),
    ).toEqual([
      ['message_start', '{"a":1}'],
      ['message', 'one\ntwo\n'],
      ['message', '{"b":2}'],
    ]);
  });

  it('takes LF, CRLF and CR line ends, also when a CRLF is split between chunks', () => {
    expect(parse(['data: a\r\n\r\ndata: b\r\rdata: c\r', '\n\r', '\ndata: d\n\n'])).toEqual([
      ['message', 'a'],
      ['message', 'b'],
      ['message', 'c'],
      ['message', 'd'],
    ]);
  });

  it('joins lines and characters split anywhere between chunks', () => {
    const bytes = Buffer.from('event: x\ndata: {"text":"é€😀"}\n\ndata: [DONE]\n\n');
    const whole = parse([bytes]);
    for (let size = 1; size <= 7; size++) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      expect(parse(chunks)).toEqual(whole);
    }
    expect(whole).toEqual([
      ['x', '{"text":"é€😀"}'],
      ['message', '[DONE]'],
    ]);
  });

  it('dispatches nothing for an event without data, and an unfinished one only at the end', () => {
    expect(parse(['event: ping\n\n', 'data: last'], false)).toEqual([]);
    expect(parse(['event: ping\n\n', 'data: last'])).toEqual([['message', 'last']]);
  });
});

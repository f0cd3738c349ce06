import { describe, expect, it } from 'vitest';
import { requestTarget } from './transport-errors.js';

describe('requestTarget', () => {
  it('reads the path of the request line, else the root', () => {
    expect(requestTarget(Buffer.from('GET /customer-support?x=1 HTTP/1.1\r\nHost: a\r\n'))).toBe(
      '/customer-support?x=1',
    );
    expect(requestTarget(Buffer.from('x-padding: ppp\r\n'))).toBe('/');
    expect(requestTarget(undefined)).toBe('/');
  });
});

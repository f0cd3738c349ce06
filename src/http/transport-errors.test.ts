import { describe, expect, it } from 'vitest';
import { requestLineTarget } from './transport-errors.js';

describe('requestLineTarget', () => {
  it('reads the path of the request line, else null', () => {
    expect(requestLineTarget(Buffer.from('GET /customer-support?x=1 HTTP/1.1\r\nHost: a\r\n'))).toBe(
      '/customer-support?x=1',
    );
    expect(requestLineTarget(Buffer.from('x-padding: ppp\r\n'))).toBeNull();
    expect(requestLineTarget(undefined)).toBeNull();
  });
});
